import { describe, expect, it } from "@effect/vitest"
import { AtomicAmount } from "../../domain/Money.js"
import { skipReason } from "../../domain/rules/ListingsSkipped.js"
import { aListing, at } from "../support/fixtures.js"

const live = aListing({ price: AtomicAmount.make(1_000_000n) })
const takenDown = aListing({ status: "taken_down", takenDownAt: at("2024-03-02T00:00:00.000Z") })

describe("listings skipped when an account wallet is added", () => {
  it("a live, priced listing the code host still serves is rebuilt", () => {
    expect(skipReason(live, true)).toBeNull()
  })

  it("a taken-down listing is never rebuilt, whatever else is true of it", () => {
    expect(skipReason(takenDown, true)).toBe("taken_down")
    expect(skipReason(takenDown, false)).toBe("taken_down")
    expect(skipReason(aListing({ ...takenDown, price: null }), true)).toBe("taken_down")
  })

  it("a listing without a price is skipped: its checkout could not sell", () => {
    expect(skipReason(aListing({ price: null }), true)).toBe("not_priced")
  })

  it("a listing the code host no longer serves is skipped rather than guessed at", () => {
    expect(skipReason(live, false)).toBe("host_unreachable")
  })
})
