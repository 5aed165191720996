import { describe, expect, it } from "@effect/vitest"
import { AccountId, CheckoutId, ListingId, RepoRef, SealedSecret } from "../../domain/Ids.js"
import { Listing } from "../../domain/Listing.js"
import { AtomicAmount } from "../../domain/Money.js"
import { Address } from "../../domain/Wallet.js"
import { takeDown } from "../../domain/rules/Takedown.js"

const CREATED = new Date("2025-01-02T03:04:05Z")
const NOW = new Date("2025-06-07T08:09:10Z")

const live = new Listing({
  id: ListingId.make("lst_1"),
  repo: new RepoRef({ owner: "octo", name: "widget" }),
  accountId: AccountId.make("acct_1"),
  hostUrl: "https://github.com/octo/widget",
  isPrivate: true,
  description: "A widget",
  language: "TypeScript",
  price: AtomicAmount.make(12_000_000n),
  payTo: { base: Address.make(`0x${"1".repeat(40)}`), solana: null },
  hostPat: SealedSecret.make("sealed-token"),
  checkoutId: CheckoutId.make("chk_1"),
  status: "live",
  createdAt: CREATED,
  updatedAt: CREATED,
  takenDownAt: null
})

describe("takedown", () => {
  it("a taken-down listing stops selling", () => {
    const down = takeDown(live, NOW)
    expect(down).toBeInstanceOf(Listing)
    expect(down.status).toBe("taken_down")
    expect(down.isLive).toBe(false)
  })

  it("the stored code-host token is destroyed, not just hidden", () => {
    expect(takeDown(live, NOW).hostPat).toBeNull()
  })

  it("the takedown is stamped with its time, which is also the listing's last update", () => {
    const down = takeDown(live, NOW)
    expect(down.takenDownAt).toEqual(NOW)
    expect(down.updatedAt).toEqual(NOW)
  })

  it("everything else about the listing is kept as it was, and the original value is not changed", () => {
    const down = takeDown(live, NOW)
    expect({ ...down }).toEqual({
      ...live,
      status: "taken_down",
      hostPat: null,
      takenDownAt: NOW,
      updatedAt: NOW
    })
    expect(down.createdAt).toEqual(CREATED)
    expect(live.status).toBe("live")
    expect(live.hostPat).toBe("sealed-token")
  })
})
