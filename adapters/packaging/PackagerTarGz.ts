import { gzipSync } from "node:zlib"
import { Either, Layer, Stream } from "effect"
import { type PackagedFile, Packager } from "../../ports/Packager.js"

/** Every entry's mtime (2000-01-01T00:00:00Z): the same files always make the same bytes. */
export const TAR_MTIME = 946_684_800

const BLOCK = 512
const FILE_MODE = 0o644
const DIR_MODE = 0o755
const encoder = new TextEncoder()

/** `width - 1` octal digits, zero-padded, then NUL: the ustar numeric field format. */
const octal = (value: number, width: number): string => `${value.toString(8).padStart(width - 1, "0")}\0`

/** ustar keeps a path in `name` (100 bytes) or splits it at a `/` into `prefix` (155) + `name`. */
const splitPath = (path: string): Either.Either<{ readonly prefix: string; readonly name: string }, string> => {
  const bytes = encoder.encode(path).length
  if (bytes <= 100) return Either.right({ prefix: "", name: path })
  for (let i = path.indexOf("/"); i !== -1; i = path.indexOf("/", i + 1)) {
    const prefix = path.slice(0, i)
    const name = path.slice(i + 1)
    if (encoder.encode(prefix).length <= 155 && encoder.encode(name).length <= 100 && name.length > 0) {
      return Either.right({ prefix, name })
    }
  }
  return Either.left(`path too long for ustar: ${path}`)
}

const header = (path: string, type: "0" | "5", mode: number, size: number): Either.Either<Uint8Array, string> =>
  Either.map(splitPath(path), ({ name, prefix }) => {
    const block = new Uint8Array(BLOCK)
    const put = (offset: number, text: string) => block.set(encoder.encode(text), offset)
    put(0, name)
    put(100, octal(mode, 8))
    put(108, octal(0, 8)) // uid
    put(116, octal(0, 8)) // gid
    put(124, octal(size, 12))
    put(136, octal(TAR_MTIME, 12))
    put(148, "        ") // checksum is computed with its own field as eight spaces
    put(156, type)
    put(257, "ustar\0")
    put(263, "00")
    put(345, prefix)
    const sum = block.reduce((a, b) => a + b, 0)
    put(148, `${sum.toString(8).padStart(6, "0")}\0 `)
    return block
  })

// Relative, no `.`/`..`/empty segments, no NUL: an archive of ours must extract where the buyer expects.
const SAFE_SEGMENT = /^(?!\.{1,2}$)[^/\0]+$/

const checkPath = (path: string): Either.Either<ReadonlyArray<string>, string> => {
  const segments = path.split("/")
  return segments.every((s) => SAFE_SEGMENT.test(s)) ? Either.right(segments) : Either.left(`unsafe path: ${JSON.stringify(path)}`)
}

/**
 * A POSIX ustar archive of the files, each parent directory listed once before its first file (mode 0755),
 * files mode 0644, owner 0:0, fixed mtime, closed by two zero blocks.
 */
export const tar = (files: ReadonlyArray<PackagedFile>): Either.Either<Uint8Array, string> => {
  const parts: Array<Uint8Array> = []
  const seen = new Set<string>()
  for (const file of files) {
    const segments = checkPath(file.path)
    if (Either.isLeft(segments)) return Either.left(segments.left)
    for (let i = 1; i < segments.right.length; i++) {
      const parent = segments.right.slice(0, i).join("/")
      if (seen.has(parent)) return Either.left(`a file and a directory share a path: ${parent}`)
      const dir = `${parent}/`
      if (seen.has(dir)) continue
      seen.add(dir)
      const h = header(dir, "5", DIR_MODE, 0)
      if (Either.isLeft(h)) return Either.left(h.left)
      parts.push(h.right)
    }
    if (seen.has(file.path) || seen.has(`${file.path}/`)) return Either.left(`path used twice: ${file.path}`)
    seen.add(file.path)
    const content = encoder.encode(file.content)
    const h = header(file.path, "0", FILE_MODE, content.length)
    if (Either.isLeft(h)) return Either.left(h.left)
    parts.push(h.right, content, new Uint8Array((BLOCK - (content.length % BLOCK)) % BLOCK))
  }
  parts.push(new Uint8Array(2 * BLOCK))
  return Either.right(Buffer.concat(parts))
}

/**
 * The tar, gzipped, as a one-chunk stream built when pulled. Meant for the service's own small archives;
 * the files are ours, so a bad path is a defect rather than an error the caller could handle.
 */
export const tarGz = (files: ReadonlyArray<PackagedFile>): Stream.Stream<Uint8Array> =>
  Stream.suspend(() =>
    Either.match(tar(files), {
      onLeft: (message) => Stream.dieMessage(`PackagerTarGz: ${message}`),
      onRight: (archive) => Stream.make(new Uint8Array(gzipSync(archive, { level: 9 })))
    })
  )

/** The Packager: gzipped tar archives, streamed. */
export const PackagerTarGz = Layer.succeed(Packager, { tarGz })
