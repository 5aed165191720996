import { describe, expect, it } from "@effect/vitest"
import { EventId, SaleId } from "../../domain/Ids.js"
import { AtomicAmount } from "../../domain/Money.js"
import { saleSettledBody } from "../../domain/rules/SaleEvent.js"
import { aSale } from "../support/fixtures.js"

describe("the sale.settled webhook body", () => {
  it("has exactly the fields DECISIONS.md names, with the amount both in dollars and in atomic units", () => {
    const sale = aSale({
      id: SaleId.make("sale_1"),
      repo: "octo/widget",
      livemode: false,
      amount: AtomicAmount.make(9_007_199_254_740_993n),
      network: "eip155:84532",
      asset: "0xAsset",
      payer: "0xPayer",
      transaction: "0xTx"
    })
    const body = saleSettledBody(EventId.make("evt_1"), sale, new Date("2024-03-01T10:00:00.999Z"))
    expect(JSON.parse(body)).toStrictEqual({
      id: "evt_1",
      type: "sale.settled",
      created: 1_709_287_200,
      livemode: false,
      data: {
        sale_id: "sale_1",
        repo: "octo/widget",
        amount_usd: "9007199254.74",
        amount: "9007199254740993",
        asset: "0xAsset",
        network: "eip155:84532",
        payer: "0xPayer",
        transaction: "0xTx",
        commit: sale.commitSha,
        archive: null,
        receipt: null
      }
    })
  })

  it("names what was sold: the commit, the archive's digest and the signed receipt, when given", () => {
    const sale = aSale({ commitSha: "0123456789abcdef0123456789abcdef01234567" })
    const delivery = { archive: { sha256: "ab".repeat(32), size: 12 }, receipt: "header.payload.signature" }
    const body = JSON.parse(saleSettledBody(EventId.make("evt_3"), sale, new Date(0), delivery))
    expect(body.data).toMatchObject({ commit: "0123456789abcdef0123456789abcdef01234567", archive: delivery.archive, receipt: delivery.receipt })
    expect(Object.keys(body.data.archive)).toEqual(["sha256", "size"])
    expect(JSON.parse(saleSettledBody(EventId.make("evt_3"), aSale({ commitSha: null }), new Date(0))).data).toMatchObject({ commit: null, archive: null, receipt: null })
  })

  it("is compact JSON, the exact bytes that are signed and sent", () => {
    const body = saleSettledBody(EventId.make("evt_1"), aSale(), new Date(0))
    expect(body).toBe(JSON.stringify(JSON.parse(body)))
  })

  it("says whether the money was live, and names no transaction when there is none", () => {
    const body = JSON.parse(saleSettledBody(EventId.make("evt_2"), aSale({ livemode: true, transaction: null }), new Date(0)))
    expect(body.livemode).toBe(true)
    expect(body.data.transaction).toBeNull()
    expect(body.created).toBe(0)
  })
})
