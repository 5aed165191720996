import type { PackagedFile, RepoTree } from "../Goods.js"
import { formatUsd } from "../Money.js"
import type { Sale } from "../Sale.js"

/**
 * The test twin never delivers the repo's bytes: its goods are a manifest of the tree at the pinned
 * commit and a note saying what a live purchase would have delivered.
 */
export const testGoodsFiles = (sale: Sale, tree: RepoTree, dir: string): ReadonlyArray<PackagedFile> => [
  {
    path: `${dir}/MANIFEST.json`,
    content: JSON.stringify(
      { repo: sale.repo, commit: sale.commitSha, truncated: tree.truncated, entries: tree.entries },
      null,
      2
    ) + "\n"
  },
  {
    path: `${dir}/NOTE.txt`,
    content: [
      "This is a TEST purchase made with simulated money on a test network.",
      `A live purchase of ${sale.repo} at commit ${sale.commitSha ?? "(unknown)"} for ${formatUsd(sale.amount)} USDC`,
      "would deliver the repository's files as this .tar.gz; here you get only the list of its files.",
      `Sale ${sale.id}, network ${sale.network}, simulated transaction ${sale.transaction ?? "(none)"}.`,
      ""
    ].join("\n")
  }
]
