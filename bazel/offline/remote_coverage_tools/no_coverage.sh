#!/bin/sh
echo "remote_coverage_tools: offline stand-in, coverage is not supported" >&2
exit 1
