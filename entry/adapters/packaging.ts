/**
 * The Packager port: deterministic tar.gz archives (the test twin's goods).
 *
 * @packageDocumentation
 */
export { PackagerTarGz, tar, tarGz } from "../../adapters/packaging/PackagerTarGz.js"
