/** The part of node-postgres's API bench/purchase-parts.ts uses (`pg` ships no types; @effect/sql-pg wraps it). */
declare module "pg" {
  class Pool {
    constructor(options: { readonly connectionString: string; readonly max?: number })
    query(text: string, values?: ReadonlyArray<unknown>): Promise<{ readonly rows: ReadonlyArray<Record<string, unknown>> }>
    end(): Promise<void>
  }
  const pg: { readonly Pool: typeof Pool }
  export default pg
}
