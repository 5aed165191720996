/**
 * What a sale's goods are made of when the service builds them itself (the test twin's manifest and note): the
 * repository tree the CodeHost port reads and the files the Packager port archives.
 */

/** One file or folder of a repository tree. */
export interface TreeEntry {
  /** Its path from the repository root. */
  readonly path: string
  /** File or folder. */
  readonly type: "file" | "dir"
  /** Its size in bytes; null for a folder. */
  readonly size: number | null
}

/** The files and folders of a repository at its head, for the repo page's preview. */
export interface RepoTree {
  /** The entries, as the host lists them. */
  readonly entries: ReadonlyArray<TreeEntry>
  /** True when the host or our limit cut the listing short. */
  readonly truncated: boolean
}

/** One file to put into an archive. */
export interface PackagedFile {
  /** Its path inside the archive. */
  readonly path: string
  /** Its text content. */
  readonly content: string
}
