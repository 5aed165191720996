/*
 * A live x402 facilitator as a real loopback HTTP server (node:http on 127.0.0.1, port 0): `POST /verify`,
 * `POST /settle`, `GET /supported` in the shapes of x402's facilitator API. Each operation answers as the
 * test says: at once, after a delay, never (the connection is held until the caller gives up), or with a
 * 500. Settlement is trusted (no chain): the transaction hash is derived from the authorization's nonce, so
 * one payment always names one transaction. With `solanaFeePayer` it also takes `exact` on Solana mainnet:
 * `/supported` names that fee payer, and a Solana payment is "settled" under its payer's own transaction
 * signature (the facilitator adds its fee-payer signature and submits; nothing is submitted here).
 * No Effect or vitest here, so a server test can use it too.
 */
import { createHash } from "node:crypto"
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { getBase58Decoder, getTransactionDecoder } from "@solana/kit"

/** `hold`: no answer until `release()`, then a normal one. `hang`: never an answer. */
export type Behaviour = "ok" | "error500" | "hang" | "hold" | { readonly delayMs: number }

export interface FacilitatorCall {
  readonly path: string
  readonly body: any
  /** Real time the request had arrived. */
  readonly at: number
}

export interface FakeFacilitator {
  /** `http://127.0.0.1:<port>`: use as X402_FACILITATOR_URL. */
  readonly url: string
  readonly calls: Array<FacilitatorCall>
  verify: Behaviour
  settle: Behaviour
  /** Answers every held request (see `hold`) as `ok` would. */
  readonly release: () => void
  /** The paths called, in order. */
  readonly paths: () => ReadonlyArray<string>
  readonly close: () => Promise<void>
}

export const SOLANA_MAINNET = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"

/** A Solana payment's transaction: its signers in order (the fee payer first) and their signatures. */
const solanaSigners = (body: any): Array<[string, Uint8Array | null]> | null => {
  const wire = body?.paymentPayload?.payload?.transaction
  if (typeof wire !== "string") return null
  try {
    return Object.entries(getTransactionDecoder().decode(Buffer.from(wire, "base64")).signatures) as Array<[string, Uint8Array | null]>
  } catch {
    return null
  }
}

/** The Solana payer: the transaction's signer that is not the fee payer the requirement names. */
const solanaPayer = (body: any): string | undefined =>
  solanaSigners(body)?.find(([address]) => address !== body?.paymentRequirements?.extra?.feePayer)?.[0]

/** The transaction the fake settles a payment under: one per EIP-3009 nonce; on Solana, the payer's signature. */
export const transactionOf = (body: any): string => {
  const payer = solanaPayer(body)
  const signature = payer === undefined ? null : solanaSigners(body)?.find(([address]) => address === payer)?.[1]
  if (signature !== undefined && signature !== null) return getBase58Decoder().decode(signature)
  return `0x${createHash("sha256").update(String(body?.paymentPayload?.payload?.authorization?.nonce ?? "")).digest("hex")}`
}

const payerOf = (body: any): string | undefined => body?.paymentPayload?.payload?.authorization?.from ?? solanaPayer(body)

export interface FakeFacilitatorOptions {
  /** Take `exact` on Solana mainnet, naming this fee payer in `/supported`. Unset: Base only. */
  readonly solanaFeePayer?: string
}

export const startFakeFacilitator = (options: FakeFacilitatorOptions = {}): Promise<FakeFacilitator> =>
  new Promise((resolve, reject) => {
    const sockets = new Set<Socket>()
    const calls: Array<FacilitatorCall> = []
    const held: Array<() => void> = []
    const answer = (res: ServerResponse, status: number, body: unknown) => {
      if (res.destroyed) return
      res.writeHead(status, { "content-type": "application/json" })
      res.end(JSON.stringify(body))
    }
    const server = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const path = new URL(req.url ?? "/", "http://x").pathname
        let body: any = undefined
        try {
          body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
        } catch {
          body = undefined
        }
        calls.push({ path, body, at: Date.now() })
        if (req.method === "GET" && path === "/supported") {
          const solana = options.solanaFeePayer === undefined ? [] : [{ x402Version: 2, scheme: "exact", network: SOLANA_MAINNET, extra: { feePayer: options.solanaFeePayer } }]
          return answer(res, 200, { kinds: [{ x402Version: 2, scheme: "exact", network: "eip155:8453" }, ...solana], extensions: [], signers: {} })
        }
        const operation = path === "/verify" ? "verify" : path === "/settle" ? "settle" : null
        if (req.method !== "POST" || operation === null) return answer(res, 404, { error: "not found" })
        const behaviour = fake[operation]
        const respondOk = () => {
          const network = body?.paymentRequirements?.network
          if (operation === "verify") return answer(res, 200, { isValid: true, payer: payerOf(body) })
          return answer(res, 200, { success: true, transaction: transactionOf(body), network, payer: payerOf(body) })
        }
        const respond = () => (behaviour === "error500" ? answer(res, 500, { error: "internal error" }) : respondOk())
        if (behaviour === "hang") return
        if (behaviour === "hold") return void held.push(respondOk)
        if (typeof behaviour === "object") {
          setTimeout(respond, behaviour.delayMs).unref()
          return
        }
        respond()
      })
    })
    server.on("connection", (socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
    })
    server.on("error", reject)
    let url = ""
    const fake: FakeFacilitator = {
      get url() {
        return url
      },
      calls,
      verify: "ok",
      settle: "ok",
      release: () => {
        for (const respond of held.splice(0)) respond()
      },
      paths: () => calls.map((c) => c.path),
      close: () =>
        new Promise<void>((done) => {
          for (const socket of sockets) socket.destroy()
          server.close(() => done())
        })
    }
    server.listen(0, "127.0.0.1", () => {
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      resolve(fake)
    })
  })

/** A loopback port nothing listens on: connections to it are refused. */
export const closedPort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const probe = createServer()
    probe.on("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })
