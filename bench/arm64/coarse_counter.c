/* How a coarse CNTVCT_EL0 reads short intervals, as the agent reads a native call: spins of known
 * length (the spin loop is calibrated as the fastest of 30 runs), each read with two counter reads.
 * Build and run (README, "arm64 measurements"): aarch64-linux-gnu-gcc -O2 -o coarse coarse_counter.c,
 * then qemu-aarch64-static -L target/arm64-root ./coarse (or ./coarse on an arm64 machine). */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
static inline uint64_t rd(void){uint64_t v;__asm__ volatile("isb\n mrs %0, cntvct_el0":"=r"(v)::"memory");return v;}
static inline uint64_t fq(void){uint64_t v;__asm__ volatile("mrs %0, cntfrq_el0":"=r"(v));return v;}
static volatile uint64_t sink;
static __attribute__((noinline)) void spin(uint64_t k){uint64_t x=sink; for(uint64_t i=0;i<k;i++){x=x*6364136223846793005ULL+1;} sink=x;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(){
  double tick=1e9/(double)fq();
  /* ns per spin iteration, over 200 ms */
  double per=1e9; for(int r=0;r<30;r++){uint64_t c0=rd(); spin(1000000); uint64_t c1=rd(); double p=(c1-c0)*tick/1e6; if(p<per)per=p;}
  /* the cost of the two reads themselves, averaged */
  const int N=20000; double *v=malloc(sizeof(double)*N);
  double read_cost=0; for(int i=0;i<N;i++){uint64_t a=rd(),b=rd(); read_cost+=(b-a)*tick;} read_cost/=N;
  printf("counter %.3f MHz (%.1f ns per tick); spin iteration %.2f ns; back-to-back read pair %.1f ns on average\n", fq()/1e6, tick, per, read_cost);
  printf("%10s %12s %9s %12s %12s %12s %14s\n","true ns","mean read*","mean err%","p10 read","p50 read","p90 read","reads off>10%");
  double lens[]={250,500,1000,2000,5000,10000,20000,50000};
  printf("(* mean of the reads within 3 us above the truth: preempted spins left out)\n");
  for(unsigned j=0;j<sizeof lens/sizeof *lens;j++){
    uint64_t kk=(uint64_t)(lens[j]/per); double truth=kk*per+read_cost;
    double sum=0; int off=0;
    for(int i=0;i<N;i++){uint64_t a=rd(); spin(kk); uint64_t b=rd(); v[i]=(b-a)*tick; sum+=v[i]; if (v[i] > truth*1.1 || v[i] < truth*0.9) off++;}
    qsort(v,N,sizeof(double),cmp);
    /* preempted samples (this host is loaded) run far past the truth: leave them out of the mean;
       the counter's own error is within one step (about 1 us here) either way */
    double tsum=0; int tn=0; for(int i=0;i<N;i++) if (v[i] < truth + 3000) {tsum+=v[i]; tn++;}
    double mean=tsum/tn; (void)sum;
    printf("%10.0f %12.1f %8.2f%% %12.1f %12.1f %12.1f %13.1f%%\n", truth, mean, 100*(mean-truth)/truth, v[N/10], v[N/2], v[N*9/10], 100.0*off/N);
  }
}
