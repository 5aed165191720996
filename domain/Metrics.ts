import { Metric } from "effect"

/*
 * What the use cases count, as Effect metrics (in Effect's global metric registry, so any exporter an
 * embedding app runs sees them; the Node host serves them to Prometheus, see hosts/node/Metrics.ts). Counted
 * once per change of state, never per attempt to change it: a sale settled by a purchase and found settled
 * again by the reconciler counts once. Labels come from fixed sets only (no ids, addresses or amounts), so a
 * stranger's traffic cannot grow a label set.
 */

/** A counter the use cases increment, with the help text an exporter shows. */
export interface CountedFact {
  /** The metric's name (Prometheus style, ending in `_total`). */
  readonly name: string
  /** What one increment means. */
  readonly help: string
  /** The counter, in Effect's global registry. */
  readonly counter: Metric.Metric.Counter<number>
}

const counted = (name: string, help: string): CountedFact => ({
  name,
  help,
  counter: Metric.counter(name, { description: help, incremental: true })
})

/** Sales that moved from pending to settled (labels: `livemode` true/false, `chain` base/solana). */
export const salesSettled = counted("repomarket_sales_settled_total", "Sales that moved from pending to settled (money reached the seller's wallet).")

/** Sales that moved from pending to failed (labels: `livemode`, `chain`). */
export const salesFailed = counted("repomarket_sales_failed_total", "Sales that moved from pending to failed (the payment did not settle).")

/**
 * Webhook delivery attempts by outcome (label `outcome`): `delivered`, `retrying` (failed, another attempt
 * is scheduled), `failed` (failed, no attempt left), `cancelled` (the webhook was removed meanwhile).
 */
export const webhookAttempts = counted("repomarket_webhook_attempts_total", "Webhook delivery attempts, by outcome: delivered, retrying, failed (no attempt left) or cancelled.")

/** Every counter the use cases keep, for an exporter. */
export const COUNTED_FACTS: ReadonlyArray<CountedFact> = [salesSettled, salesFailed, webhookAttempts]

/** One increment of `fact` with `labels`. */
export const count = (fact: CountedFact, labels: Readonly<Record<string, string>>) => {
  let metric = fact.counter
  for (const [key, value] of Object.entries(labels)) metric = Metric.tagged(metric, key, value)
  return Metric.increment(metric)
}
