import { Context, type Stream } from "effect"
import type { PackagedFile } from "../domain/Goods.js"

// A file to archive is model data (the test goods' rule makes them); re-exported here under the name adapters
// have always imported it by.
export type { PackagedFile } from "../domain/Goods.js"

/** Builds small archives the service makes itself (the test twin's goods): a gzipped tar, streamed. */
export class Packager extends Context.Tag("repomarket/Packager")<Packager, {
  readonly tarGz: (files: ReadonlyArray<PackagedFile>) => Stream.Stream<Uint8Array>
}>() {}
