import { StorageMemory } from "../../adapters/memory/StorageMemory.js"
import { memoryBackend, runStorageContracts } from "../../testing/contracts/StorageContracts.js"

// Through the same function `repomarket/testing` exports, so embedders run exactly this suite.
runStorageContracts(memoryBackend, StorageMemory)
