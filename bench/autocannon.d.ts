/** The part of autocannon 8's API the benchmarks use (the package ships no types). */
declare module "autocannon" {
  interface Histogram {
    readonly average: number
    readonly mean: number
    readonly stddev: number
    readonly min: number
    readonly max: number
    readonly total: number
    readonly p50: number
    readonly p90: number
    readonly p99: number
  }
  interface Options {
    readonly url: string
    readonly connections?: number
    readonly duration?: number
    readonly amount?: number
    readonly pipelining?: number
    readonly timeout?: number
    readonly method?: string
    readonly headers?: Readonly<Record<string, string>>
  }
  interface Result {
    readonly duration: number
    readonly errors: number
    readonly timeouts: number
    readonly non2xx: number
    readonly resets: number
    readonly statusCodeStats: Readonly<Record<string, { readonly count: number }>>
    readonly latency: Histogram
    readonly requests: Histogram & { readonly sent: number }
    readonly throughput: Histogram
  }
  function autocannon(options: Options): Promise<Result>
  export default autocannon
}
