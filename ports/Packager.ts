import { Context, type Stream } from "effect"

/** One file to put into an archive. */
export interface PackagedFile {
  /** Its path inside the archive. */
  readonly path: string
  /** Its text content. */
  readonly content: string
}

/** Builds small archives the service makes itself (the test twin's goods): a gzipped tar, streamed. */
export class Packager extends Context.Tag("ports/Packager")<Packager, {
  readonly tarGz: (files: ReadonlyArray<PackagedFile>) => Stream.Stream<Uint8Array>
}>() {}
