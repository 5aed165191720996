/*
 * Shared by the use-case tests under test/usecases: a payment facilitator whose every answer the test
 * scripts (and counts), and the Settlements use case on memory adapters around it.
 */
import { authorizationTypes } from "@x402/evm"
import { type Context, Effect, Layer, Metric, type MetricState, Option, type Tracer } from "effect"
import { getAddress, type Hex } from "viem"
import type { PrivateKeyAccount } from "viem/accounts"
import { ReceiptSignerTest } from "../../adapters/crypto/ReceiptSignerEd25519.js"
import { SecretBoxTest } from "../../adapters/crypto/SecretBoxAesGcm.js"
import { CodeHostMemory } from "../../adapters/memory/CodeHostMemory.js"
import { StorageMemory } from "../../adapters/memory/StorageMemory.js"
import type { SaleId } from "../../domain/Ids.js"
import type { CountedFact } from "../../domain/Metrics.js"
import type { Sale } from "../../domain/Sale.js"
import type { Chain } from "../../domain/Wallet.js"
import { Settlements } from "../../domain/usecases/Settlements.js"
import {
  type Facilitator,
  PaymentFacilitator,
  type PaymentRequirement,
  type Settlement,
  type SettlementStatus,
  type SubmittedPayment,
  type Verification,
  FacilitatorError
} from "../../ports/PaymentFacilitator.js"
import { PublicOrigin } from "../../ports/PublicOrigin.js"
import { SaleLedger } from "../../ports/SaleLedger.js"

/** What a stub facilitator answers; each defaults to a harmless answer (Unknown, valid, settled). */
export interface Answers {
  readonly status?: (sale: Sale) => Effect.Effect<SettlementStatus>
  readonly verify?: (payment: SubmittedPayment, requirement: PaymentRequirement) => Effect.Effect<Verification, FacilitatorError>
  readonly settle?: (payment: SubmittedPayment, requirement: PaymentRequirement) => Effect.Effect<Settlement, FacilitatorError>
}

/** A facilitator answering what the test says, counting the calls and keeping the order `status` was asked in. */
export interface Stub {
  readonly facilitator: Facilitator
  readonly calls: { status: number; verify: number; settle: number }
  /** The sales `status` was asked about, in order. */
  readonly asked: Array<SaleId>
}

export const stubFacilitator = (answers: Answers = {}): Stub => {
  const calls = { status: 0, verify: 0, settle: 0 }
  const asked: Array<SaleId> = []
  const facilitator: Facilitator = {
    status: (sale) =>
      Effect.suspend(() => {
        calls.status++
        asked.push(sale.id)
        return answers.status?.(sale) ?? Effect.succeed<SettlementStatus>({ _tag: "Unknown", reason: "not scripted" })
      }),
    verify: (payment, requirement) =>
      Effect.suspend(() => {
        calls.verify++
        return answers.verify?.(payment, requirement) ?? Effect.succeed({ valid: true, invalidReason: null, payer: null })
      }),
    settle: (payment, requirement) =>
      Effect.suspend(() => {
        calls.settle++
        return answers.settle?.(payment, requirement) ??
          Effect.succeed({ success: true, transaction: "0xsettled", network: requirement.network, payer: null, errorReason: null })
      })
  }
  return { facilitator, calls, asked }
}

/**
 * The PaymentFacilitator port over stubs: `live` (None when the operator configured none) and `test`;
 * `extra` names the scheme extras it adds to a requirement (a Solana fee payer), none by default; null when
 * it cannot describe the chain.
 */
export const facilitatorLayer = (
  stubs: { readonly live: Option.Option<Stub>; readonly test: Stub },
  extra: (chain: Chain, livemode: boolean) => Readonly<Record<string, string>> | null = () => ({})
) =>
  Layer.succeed(PaymentFacilitator, {
    live: Option.map(stubs.live, (s) => s.facilitator),
    test: stubs.test.facilitator,
    // null: the facilitator cannot describe this chain's payment right now (e.g. it names no fee payer).
    extra: (chain, livemode) =>
      Effect.suspend(() => {
        const named = extra(chain, livemode)
        return named === null ? Effect.fail(new FacilitatorError({ reason: "unreachable", message: `no extras for ${chain}` })) : Effect.succeed(named)
      })
  })

type Ledger = Context.Tag.Service<SaleLedger>

/**
 * Memory storage, the test key and the facilitators given; `wrap` decorates the ledger every use case (and
 * the test) sees: a failing store, a store that counts its queries.
 */
export const storageOn = (facilitators: Layer.Layer<PaymentFacilitator>, wrap: (ledger: Ledger) => Ledger = (l) => l) =>
  Layer.effect(SaleLedger, Effect.map(SaleLedger, wrap)).pipe(
    Layer.provideMerge(Layer.mergeAll(StorageMemory, SecretBoxTest, facilitators, ReceiptsOn))
  )

/** What a settlement's webhook event signs its receipt with: a code host (for archive digests) and a signing key. */
export const ReceiptsOn = Layer.merge(CodeHostMemory(), ReceiptSignerTest).pipe(
  Layer.provideMerge(Layer.succeed(PublicOrigin, { baseUrl: "https://market.test" }))
)

/** Settlements on `storageOn`. */
export const SettlementsOn = (facilitators: Layer.Layer<PaymentFacilitator>, wrap?: (ledger: Ledger) => Ledger) =>
  Settlements.Default.pipe(Layer.provideMerge(storageOn(facilitators, wrap)))

/** A counter's current value for these labels, read the way `count` writes it. */
export const counted = (fact: CountedFact, labels: Readonly<Record<string, string>>) => {
  let metric = fact.counter
  for (const [key, value] of Object.entries(labels)) metric = Metric.tagged(metric, key, value)
  return Effect.map(Metric.value(metric), (state: MetricState.MetricState.Counter<number>) => state.count)
}

/** The names of the current span and its parents, innermost first: what a tracer would show around this call. */
export const spanNames: Effect.Effect<ReadonlyArray<string>> = Effect.map(Effect.option(Effect.currentSpan), (current) => {
  const names: Array<string> = []
  let span: Tracer.AnySpan | undefined = Option.getOrUndefined(current)
  while (span !== undefined) {
    if (span._tag === "Span") names.push(span.name)
    span = span._tag === "Span" ? Option.getOrUndefined(span.parent) : undefined
  }
  return names
})

/** An EIP-3009 authorization for `requirement`, signed by `buyer` with viem, valid for 10 minutes from `now`, as an x402 v2 payment. */
export const signedPayment = (buyer: PrivateKeyAccount, requirement: PaymentRequirement, now: Date) =>
  Effect.promise(async (): Promise<SubmittedPayment> => {
    const authorization = {
      from: buyer.address,
      to: getAddress(requirement.payTo),
      value: requirement.amount,
      validAfter: 0n,
      validBefore: BigInt(now.getTime() / 1000 + 600),
      nonce: `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}` as Hex
    }
    const signature = await buyer.signTypedData({
      domain: {
        name: requirement.extra["name"]!,
        version: requirement.extra["version"]!,
        chainId: Number(requirement.network.split(":")[1]),
        verifyingContract: getAddress(requirement.asset)
      },
      types: authorizationTypes,
      primaryType: "TransferWithAuthorization",
      message: authorization
    })
    const payload = {
      signature,
      authorization: {
        ...authorization,
        value: `${authorization.value}`,
        validAfter: `${authorization.validAfter}`,
        validBefore: `${authorization.validBefore}`
      }
    }
    const { amount, asset, network, payTo } = requirement
    return {
      x402Version: 2,
      scheme: "exact",
      network,
      accepted: Option.some({ scheme: "exact", network, asset, amount: `${amount}`, payTo }),
      payload,
      raw: {}
    }
  })
