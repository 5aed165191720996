import { describe, expect, it } from "@effect/vitest"
import { AccountId, RepoRef } from "../../domain/Ids.js"
import { accessTo, provesControl } from "../../domain/rules/Ownership.js"
import { anAccount, aListing } from "../support/fixtures.js"

const SELLER = AccountId.make("acct_seller")
const listingOf = (owner: string, accountId: AccountId | null = SELLER) =>
  aListing({ repo: new RepoRef({ owner, name: "widget" }), accountId })

describe("who may act on a listing", () => {
  it("the account that owns a listing may act on it as its owner", () => {
    expect(accessTo(listingOf("octo"), anAccount({ id: SELLER }))).toBe("owner")
  })

  it("the owning account is the owner even when its login also proves control of the repo", () => {
    expect(accessTo(listingOf("octo"), anAccount({ id: SELLER, hostLogin: "octo" }))).toBe("owner")
  })

  it("another account whose verified login is the repo's owner proves control and may take it over", () => {
    expect(accessTo(listingOf("octo"), anAccount({ hostLogin: "octo" }))).toBe("proven_control")
  })

  it("a login proves control of its repos whatever the case either is written in (code-host logins ignore case)", () => {
    expect(accessTo(listingOf("OctoCat"), anAccount({ hostLogin: "octocat" }))).toBe("proven_control")
    expect(accessTo(listingOf("octocat"), anAccount({ hostLogin: "OCTOCAT" }))).toBe("proven_control")
  })

  it("a login that is not the owner cannot take over a listing", () => {
    const listing = listingOf("octo")
    expect(accessTo(listing, anAccount({ hostLogin: "mallory" }))).toBe("none")
    // A login that merely contains, or is contained in, the owner's name proves nothing either.
    expect(accessTo(listing, anAccount({ hostLogin: "octo-fan" }))).toBe("none")
    expect(accessTo(listing, anAccount({ hostLogin: "oct" }))).toBe("none")
    expect(provesControl(anAccount({ hostLogin: "mallory" }), "octo")).toBe(false)
  })

  it("an account with no linked login cannot take over any listing", () => {
    expect(accessTo(listingOf("octo"), anAccount({ hostLogin: null }))).toBe("none")
    expect(provesControl(anAccount({ hostLogin: null }), "octo")).toBe(false)
  })

  it("an anonymous caller may act on no listing, not even an anonymous one", () => {
    expect(accessTo(listingOf("octo"), null)).toBe("none")
    expect(accessTo(listingOf("octo", null), null)).toBe("none")
    expect(provesControl(null, "octo")).toBe(false)
  })

  it("signing in does not make an account the owner of an anonymous listing", () => {
    expect(accessTo(listingOf("octo", null), anAccount())).toBe("none")
  })
})
