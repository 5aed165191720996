import { describe, expect, it } from "@effect/vitest"
import { CheckoutId, ListingId, SaleId } from "../../domain/Ids.js"
import { AtomicAmount } from "../../domain/Money.js"
import { Sale } from "../../domain/Sale.js"
import { testGoodsFiles } from "../../domain/rules/TestGoods.js"
import type { RepoTree } from "../../ports/CodeHost.js"

const SHA = "0123456789abcdef0123456789abcdef01234567"

const sale = (over: Partial<ConstructorParameters<typeof Sale>[0]> = {}) =>
  new Sale({
    id: SaleId.make("sale_T1"),
    paymentKey: "key",
    listingId: ListingId.make("lst_1"),
    checkoutId: CheckoutId.make("chk_1"),
    accountId: null,
    repo: "octo/widget",
    livemode: false,
    chain: "base",
    network: "eip155:84532",
    asset: "0xasset",
    amount: AtomicAmount.make(12_340_000n), // 12.34 USDC
    payTo: "0xpayto",
    payer: "0xpayer",
    commitSha: SHA,
    transaction: "0xtx",
    status: "settled",
    failureReason: null,
    createdAt: new Date("2025-01-01T00:00:00Z"),
    settledAt: new Date("2025-01-01T00:00:05Z"),
    ...over
  })

const TREE: RepoTree = {
  entries: [
    { path: "README.md", type: "file", size: 120 },
    { path: "src", type: "dir", size: null },
    { path: "src/index.ts", type: "file", size: 2048 }
  ],
  truncated: false
}

describe("test-purchase goods", () => {
  it("a test purchase delivers exactly a manifest and a note, in the folder given, never the repo's files", () => {
    const files = testGoodsFiles(sale(), TREE, "octo-widget-0123456")
    expect(files.map((f) => f.path)).toEqual(["octo-widget-0123456/MANIFEST.json", "octo-widget-0123456/NOTE.txt"])
  })

  it("the manifest names the repo, the pinned commit and every tree entry, as indented JSON ending in a newline", () => {
    const [manifest] = testGoodsFiles(sale(), TREE, "d")
    expect(manifest!.content).toBe(
      JSON.stringify({ repo: "octo/widget", commit: SHA, truncated: false, entries: TREE.entries }, null, 2) + "\n"
    )
    expect(manifest!.content).toContain("\n  \"repo\": \"octo/widget\",\n")
    expect(JSON.parse(manifest!.content)).toEqual({ repo: "octo/widget", commit: SHA, truncated: false, entries: TREE.entries })
  })

  it("the manifest says when the tree was cut short, and has a null commit when none was pinned", () => {
    const [manifest] = testGoodsFiles(sale({ commitSha: null }), { entries: [], truncated: true }, "d")
    expect(JSON.parse(manifest!.content)).toEqual({ repo: "octo/widget", commit: null, truncated: true, entries: [] })
  })

  it("the note says the purchase was simulated and what a live purchase would have delivered, for how much", () => {
    const [, note] = testGoodsFiles(sale(), TREE, "d")
    expect(note!.content).toBe([
      "This is a TEST purchase made with simulated money on a test network.",
      `A live purchase of octo/widget at commit ${SHA} for 12.34 USDC`,
      "would deliver the repository's files as this .tar.gz; here you get only the list of its files.",
      "Sale sale_T1, network eip155:84532, simulated transaction 0xtx.",
      ""
    ].join("\n"))
  })

  it("the note says so when the commit or the simulated transaction is not known", () => {
    const [, note] = testGoodsFiles(sale({ commitSha: null, transaction: null }), TREE, "d")
    expect(note!.content).toContain("A live purchase of octo/widget at commit (unknown) for 12.34 USDC\n")
    expect(note!.content).toContain("Sale sale_T1, network eip155:84532, simulated transaction (none).\n")
  })
})
