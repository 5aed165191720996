import { StorageMemory } from "../../adapters/memory/StorageMemory.js"
import { storageContracts } from "./StorageContracts.js"

storageContracts("memory", StorageMemory)
