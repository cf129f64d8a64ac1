/* One step of an LSTM recurrence's products at hidden size 256 (4 gates, R
 * 1 MiB, from the L2), S[g][tile][b][16] = sum_k R[g][tile][k][16] h[b][k],
 * in C with AVX-512 intrinsics, for batch B of 4 and 8: NT tiles of 16 units
 * per statement and its sums kept in registers over CH terms of k before
 * they are added to S (CH = 16: disco's recurrent template's chunks;
 * CH = 256: over all of k). Prints us per step and GFLOP/s for each form
 * (benchmarks/results/recurrent-matmul-2026-12-06.md).
 * Build: cc -O3 -march=native recurrent_step_kernels.c -o recurrent_step_kernels */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define H 256
#define G 4
#define JT (H/16)
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
float *R,*h,*S;
// NT tiles, B rows, chunk CH terms per RMW of S (CH=H: regs over all k), 2 chains when NT*B<8
#define DEF(NAME,B,NT,CH) \
__attribute__((noinline)) void NAME(void){ \
  for(int g=0;g<G;g++)for(int jt=0;jt+NT<=JT;jt+=NT){ \
    const float*r=R+((size_t)(g*JT+jt)*H)*16; float*s=S+(size_t)(g*JT+jt)*B*16; \
    for(int t=0;t<NT;t++)for(int b=0;b<B;b++)_mm512_store_ps(s+t*B*16+b*16,_mm512_setzero_ps()); \
    for(int c=0;c<H;c+=CH){ \
    __m512 a[NT][B], a2[NT][B]; \
    for(int t=0;t<NT;t++)for(int b=0;b<B;b++){a[t][b]=_mm512_setzero_ps();a2[t][b]=_mm512_setzero_ps();} \
    for(int k=c;k<c+CH;k+=2){ \
      __m512 w[NT],w2[NT]; for(int t=0;t<NT;t++){ w[t]=_mm512_load_ps(r+t*H*16+k*16); w2[t]=_mm512_load_ps(r+t*H*16+k*16+16);} \
      for(int b=0;b<B;b++){__m512 hb=_mm512_set1_ps(h[b*H+k]),hb2=_mm512_set1_ps(h[b*H+k+1]); for(int t=0;t<NT;t++){ \
        if(NT*B<8){a[t][b]=_mm512_fmadd_ps(w[t],hb,a[t][b]);a2[t][b]=_mm512_fmadd_ps(w2[t],hb2,a2[t][b]);} \
        else {a[t][b]=_mm512_fmadd_ps(w[t],hb,a[t][b]);a[t][b]=_mm512_fmadd_ps(w2[t],hb2,a[t][b]);}}} \
    } \
    for(int t=0;t<NT;t++)for(int b=0;b<B;b++)_mm512_store_ps(s+t*B*16+b*16,_mm512_add_ps(_mm512_load_ps(s+t*B*16+b*16),_mm512_add_ps(a[t][b],a2[t][b]))); \
  } } }
DEF(b4t1c16,4,1,16) DEF(b4t1c64,4,1,64) DEF(b4t1c256,4,1,256) DEF(b4t2c16,4,2,16) DEF(b4t2c64,4,2,64) DEF(b4t2c256,4,2,256) DEF(b4t4c16,4,4,16) DEF(b4t4c256,4,4,256)
DEF(b8t1c16,8,1,16) DEF(b8t1c64,8,1,64) DEF(b8t1c256,8,1,256) DEF(b8t2c16,8,2,16) DEF(b8t2c256,8,2,256)
int main(){
  int steps=2000;
  R=aligned_alloc(64,(size_t)G*H*H*4); h=aligned_alloc(64,8*H*4); S=aligned_alloc(64,(size_t)G*H*8*4*2);
  for(size_t i=0;i<(size_t)G*H*H;i++)R[i]=(i%7)*0.01f; for(int i=0;i<8*H;i++)h[i]=0.001f*i;
  struct {void(*f)(void);int B;const char*n;} fs[]={{b4t1c16,4,"b4t1c16"},{b4t1c64,4,"b4t1c64"},{b4t1c256,4,"b4t1c256"},{b4t2c16,4,"b4t2c16"},{b4t2c64,4,"b4t2c64"},{b4t2c256,4,"b4t2c256"},{b4t4c16,4,"b4t4c16"},{b4t4c256,4,"b4t4c256"},
   {b8t1c16,8,"b8t1c16"},{b8t1c64,8,"b8t1c64"},{b8t1c256,8,"b8t1c256"},{b8t2c16,8,"b8t2c16"},{b8t2c256,8,"b8t2c256"}};
  int n=sizeof fs/sizeof fs[0];
  for(int rep=0;rep<2;rep++) for(int f=0;f<n;f++){
    for(int i=0;i<50;i++)fs[f].f();
    double t=now(); for(int i=0;i<steps;i++)fs[f].f(); t=now()-t;
    double fl=2.0*G*H*H*fs[f].B*steps;
    printf("%-10s: %.2f us/step %.1f GFLOP/s\n",fs[f].n,t/steps*1e6,fl/t*1e-9);
  }
}
