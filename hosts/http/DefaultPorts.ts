import { Layer } from "effect"
import { ChainsLive } from "../../adapters/chains/ChainsLive.js"
import { SecretBoxAesGcm } from "../../adapters/crypto/SecretBoxAesGcm.js"
import { MailerLive } from "../../adapters/mail/MailerLive.js"
import { CodeHostMemory } from "../../adapters/memory/CodeHostMemory.js"
import { RateLimiterMemory } from "../../adapters/memory/RateLimiterMemory.js"
import { WebhookSenderHttp } from "../../adapters/webhook/WebhookSenderHttp.js"
import { StorageMemory } from "./AppLayer.js"
import { PublicOriginFromConfig } from "./Settings.js"

/** Until the GitHub adapter lands, the server's code host is an in-memory one holding a demo repo. */
const DemoCodeHost = CodeHostMemory([
  {
    owner: "repomarket-demo",
    name: "hello-x402",
    description: "A tiny demo repository to try listing and buying.",
    language: "TypeScript",
    topics: ["x402", "demo"],
    license: "MIT",
    files: {
      "README.md": "# hello-x402\n\nA demo repository served by the in-memory code host.\n",
      "src/index.ts": "export const hello = () => \"hello, buyer\"\n"
    }
  }
])

/** The adapters `npm start` runs on: nothing to install or configure. */
export const DefaultPorts = Layer.mergeAll(
  StorageMemory,
  DemoCodeHost,
  ChainsLive,
  SecretBoxAesGcm,
  MailerLive,
  RateLimiterMemory,
  WebhookSenderHttp,
  PublicOriginFromConfig
)
