/**
 * The Packager port: deterministic tar.gz archives (the test twin's goods).
 *
 * @packageDocumentation
 */
export { PackagerTarGz, tar, tarGz } from "../../adapters/packaging/PackagerTarGz.js"

// Types of the core (the same as `repomarket`'s) and of this family that this entry's signatures name, so a
// consumer can name them too. Types only: the values come from the entry that owns them.
export type { PackagedFile } from "../../domain/Goods.js"
export type { Packager } from "../../ports/Packager.js"
