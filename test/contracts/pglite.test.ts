import { Layer } from "effect"
import { StorageSql } from "../../adapters/sql/SqlLive.js"
import { pgliteTestDatabase } from "../support/pglite.js"
import { storageContracts } from "./StorageContracts.js"

// One embedded database for the whole file (creating one takes seconds), in a temporary directory.
storageContracts("pglite", StorageSql.pipe(Layer.provide(pgliteTestDatabase())))
