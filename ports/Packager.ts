import { Context, type Stream } from "effect"

export interface PackagedFile {
  readonly path: string
  readonly content: string
}

/** Builds small archives the service makes itself (the test twin's goods): a gzipped tar, streamed. */
export class Packager extends Context.Tag("ports/Packager")<Packager, {
  readonly tarGz: (files: ReadonlyArray<PackagedFile>) => Stream.Stream<Uint8Array>
}>() {}
