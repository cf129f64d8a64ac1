// ONNX Runtime peer for benchmarks/harness: a long-lived child process that
// times one model at one shape per request, so the harness can interleave
// ONNX Runtime with disco in one run.
//
// Protocol: one JSON request per stdin line, one JSON reply per stdout line.
//   {"model": PATH, "inputs": {NAME: [..shape], ...}, "threads": N, "runs": R, "warmup": W}
//   -> {"ms": [r1, ...]}  or  {"error": "..."}
// Input data is deterministic float32 (same generator as disco's random_tensor
// is not needed: timing does not depend on values for these models).
'use strict';
const ort = require('onnxruntime-node');
const readline = require('readline');

const sessions = new Map();

async function session(model, threads) {
  const key = model + '|' + threads;
  if (!sessions.has(key)) {
    sessions.set(key, await ort.InferenceSession.create(model, {
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
    }));
  }
  return sessions.get(key);
}

function input(shape) {
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Float32Array(n);
  let s = 12345;
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    data[i] = (s / 4294967296) * 2 - 1;
  }
  return new ort.Tensor('float32', data, shape);
}

async function handle(req) {
  const s = await session(req.model, req.threads);
  const feeds = {};
  for (const [name, shape] of Object.entries(req.inputs)) feeds[name] = input(shape);
  for (let i = 0; i < (req.warmup || 0); i++) await s.run(feeds);
  const ms = [];
  for (let i = 0; i < req.runs; i++) {
    const t0 = process.hrtime.bigint();
    await s.run(feeds);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return {ms};
}

const rl = readline.createInterface({input: process.stdin});
let chain = Promise.resolve();
rl.on('line', (line) => {
  chain = chain.then(async () => {
    let reply;
    try {
      reply = await handle(JSON.parse(line));
    } catch (e) {
      reply = {error: String(e && e.message ? e.message : e).replace(/\s+/g, ' ')};
    }
    process.stdout.write(JSON.stringify(reply) + '\n');
  });
});
