import type { FakeRepo } from "../../entry/testing.js"

/*
 * The sample repositories of `npm run demo`, served by the memory code host in place of GitHub: made up, with
 * READMEs, languages and topics enough for the home page's categories, the catalog's search and the repo
 * pages' previews to show what they do. Each is listed at the price beside it.
 */

/** Where the demo seller is paid (made-up addresses: the demo sells on the test twin only). */
export const DEMO_WALLETS = {
  base: "0x20d2b46d5159d0c2ede8c81390d89be02deb2dcb",
  solana: "4AdfSTEkcBtdks2zEq7QBk7rsp1zk6wqQsTcBwwWTJnE"
} as const

/** A sample repository and the price it is listed at. */
export interface DemoRepo {
  readonly repo: FakeRepo
  readonly priceUsd: string
}

const readme = (title: string, body: string) => `# ${title}\n\n${body}\n\n## Install\n\n\`\`\`sh\nnpm install ${title}\n\`\`\`\n`

/** The sample repositories, in the order they are listed. */
export const DEMO_REPOS: ReadonlyArray<DemoRepo> = [
  {
    priceUsd: "12.00",
    repo: {
      owner: "acme-tools",
      name: "json-stream",
      description: "A streaming JSON parser that never holds the whole document",
      language: "TypeScript",
      stars: 1840,
      topics: ["json", "parser", "streaming"],
      license: "MIT",
      headSha: "3f2a9c1d0b7e4a6f8c2d1e0f9a8b7c6d5e4f3a21",
      files: {
        "README.md": readme("json-stream", "Parse JSON as it arrives: *events* for every value, constant memory, no dependencies."),
        "src/index.ts": "export { parse } from \"./parse.js\"\n",
        "src/parse.ts": "export const parse = (chunk: string): ReadonlyArray<string> => chunk.split(\",\")\n",
        "package.json": "{ \"name\": \"json-stream\", \"version\": \"2.1.0\" }\n"
      }
    }
  },
  {
    priceUsd: "4.00",
    repo: {
      owner: "acme-tools",
      name: "tiny-cli",
      description: "Argument parsing and coloured help for small command-line tools",
      language: "Rust",
      stars: 312,
      topics: ["cli", "terminal"],
      license: "Apache-2.0",
      headSha: "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d",
      files: {
        "README.md": "# tiny-cli\n\nFlags, subcommands and `--help` in 300 lines of Rust.\n",
        "src/main.rs": "fn main() {\n    println!(\"tiny-cli\");\n}\n",
        "Cargo.toml": "[package]\nname = \"tiny-cli\"\nversion = \"0.4.0\"\n"
      }
    }
  },
  {
    priceUsd: "25.00",
    repo: {
      owner: "lab42",
      name: "vision-notebooks",
      description: "Image classification notebooks, from a baseline to a fine-tuned model",
      language: "Python",
      stars: 97,
      topics: ["machine-learning", "computer-vision"],
      license: null,
      headSha: "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567",
      files: {
        "README.md": "# vision-notebooks\n\nSeven notebooks, each runnable on a laptop CPU in under ten minutes.\n\n| notebook | accuracy |\n|---|---|\n| baseline | 71 % |\n| fine-tuned | 94 % |\n",
        "notebooks/01-baseline.py": "print(\"baseline\")\n",
        "requirements.txt": "numpy\n"
      }
    }
  },
  {
    priceUsd: "49.00",
    repo: {
      owner: "lab42",
      name: "escrow-contracts",
      description: "Audited escrow smart contracts for USDC on Base",
      language: "Solidity",
      stars: 205,
      topics: ["ethereum", "smart-contracts", "usdc"],
      license: "MIT",
      headSha: "fedcba9876543210fedcba9876543210fedcba98",
      files: {
        "README.md": "# escrow-contracts\n\nRelease funds when both sides agree, or after a deadline.\n",
        "contracts/Escrow.sol": "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.24;\ncontract Escrow {}\n"
      }
    }
  }
]
