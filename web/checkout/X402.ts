/*
 * The x402 v2 wire as the checkout page speaks it: read the offer from the checkout's own 402
 * (`PAYMENT-REQUIRED`), send a payment in `PAYMENT-SIGNATURE`, and sort the answer into what a person
 * needs to know. Same origin only: the page never talks to a chain or a facilitator itself.
 */

export interface Requirement {
  readonly scheme: string
  readonly network: string
  readonly asset: string
  readonly amount: string
  readonly payTo: string
  readonly maxTimeoutSeconds: number
  readonly extra: Readonly<Record<string, string>>
}

export interface PaymentRequired {
  readonly x402Version: 2
  readonly error?: string
  readonly resource: { readonly url: string; readonly description: string; readonly mimeType: string }
  readonly accepts: ReadonlyArray<Requirement>
}

const utf8ToBase64 = (text: string): string => {
  const bytes = new TextEncoder().encode(text)
  let binary = ""
  for (const b of bytes) binary += String.fromCharCode(b)
  return btoa(binary)
}

const base64ToUtf8 = (b64: string): string =>
  new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)))

export const bytesToBase64 = (bytes: Uint8Array): string => {
  let binary = ""
  for (const b of bytes) binary += String.fromCharCode(b)
  return btoa(binary)
}

/** An x402 `payment-identifier` id: 32 characters of [0-9a-f] from the browser's CSPRNG (16 to 128 allowed). */
export const newPaymentId = (): string =>
  `pay_${Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("")}`

/** Fetches the checkout as an x402 client does (no HTML preference) and reads its offer. */
export const fetchOffer = async (url: string): Promise<PaymentRequired> => {
  const res = await fetch(url, { headers: { accept: "application/json" }, cache: "no-store" })
  const header = res.headers.get("payment-required")
  if (res.status === 402 && header !== null) return JSON.parse(base64ToUtf8(header)) as PaymentRequired
  throw new Refusal(await reasonOf(res))
}

/**
 * A recent Solana blockhash from the server (`GET /checkout/solana/blockhash`, asked of its own Solana RPC
 * endpoint), for a live requirement that names none: the page may not ask an RPC endpoint itself.
 */
export const fetchSolanaBlockhash = async (): Promise<{ blockhash: string; lastValidBlockHeight: bigint }> => {
  const res = await fetch("/checkout/solana/blockhash", { headers: { accept: "application/json" }, cache: "no-store" })
  if (!res.ok) throw new Refusal(await reasonOf(res))
  const body = (await res.json()) as { blockhash?: unknown; last_valid_block_height?: unknown }
  if (typeof body.blockhash !== "string" || typeof body.last_valid_block_height !== "number") {
    throw new Refusal({ status: res.status, code: "bad_blockhash", detail: "The server answered no usable Solana blockhash.", retryAfter: null })
  }
  return { blockhash: body.blockhash, lastValidBlockHeight: BigInt(body.last_valid_block_height) }
}

/** The payment as it goes on the wire, with the buyer's id so that sending it again is safe. */
export const paymentHeader = (
  offer: PaymentRequired,
  accepted: Requirement,
  payload: Readonly<Record<string, unknown>>,
  paymentId: string
): string =>
  utf8ToBase64(JSON.stringify({
    x402Version: 2,
    resource: offer.resource,
    accepted,
    payload,
    extensions: { "payment-identifier": { info: { id: paymentId } } }
  }))

/** A refusal worth showing a person: the server's own words, and the x402 reason code when there is one. */
export class Refusal extends Error {
  constructor(readonly reason: { readonly status: number; readonly code: string; readonly detail: string; readonly retryAfter: number | null }) {
    super(reason.detail)
  }
}

const reasonOf = async (res: Response): Promise<Refusal["reason"]> => {
  let body: Record<string, unknown> = {}
  try {
    body = (await res.json()) as Record<string, unknown>
  } catch {
    // Not JSON (a proxy's page): the status alone has to do.
  }
  const code = typeof body["code"] === "string" ? body["code"] : typeof body["error"] === "string" ? body["error"] : `http_${res.status}`
  const detail = typeof body["detail"] === "string" ? body["detail"] : typeof body["title"] === "string" ? body["title"] : ""
  const retry = Number(res.headers.get("retry-after"))
  return { status: res.status, code, detail, retryAfter: Number.isFinite(retry) && retry > 0 ? retry : null }
}

export interface Paid {
  readonly filename: string
  readonly receipt: string | null
  readonly transaction: string | null
  /** The archive, or what went wrong reading it (the payment stands either way). */
  readonly archive: Promise<Blob>
}

const filenameOf = (disposition: string | null): string =>
  /filename="([^"]+)"/.exec(disposition ?? "")?.[1] ?? "repository.tar.gz"

const receiptOf = (link: string | null): string | null => /<([^>]+)>\s*;\s*rel="?receipt"?/.exec(link ?? "")?.[1] ?? null

const transactionOf = (header: string | null): string | null => {
  if (header === null) return null
  try {
    const settled = JSON.parse(base64ToUtf8(header)) as { transaction?: unknown }
    return typeof settled.transaction === "string" && settled.transaction !== "" ? settled.transaction : null
  } catch {
    return null
  }
}

/**
 * Presents the payment. Paid: the receipt and the archive's bytes as they arrive. Anything else is a
 * `Refusal` carrying the server's detail. A request that got no answer at all rejects with a TypeError:
 * the caller may send the same payment again (its id makes that safe).
 */
export const pay = async (url: string, header: string): Promise<Paid> => {
  const res = await fetch(url, { headers: { accept: "application/json", "payment-signature": header }, cache: "no-store" })
  if (!res.ok) throw new Refusal(await reasonOf(res))
  return {
    filename: filenameOf(res.headers.get("content-disposition")),
    receipt: receiptOf(res.headers.get("link")),
    transaction: transactionOf(res.headers.get("payment-response")),
    archive: res.blob()
  }
}
