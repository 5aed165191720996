import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto"
import { Redacted } from "effect"
import { KID, type KeyRing } from "./SecretKeys.js"

/**
 * Archives sealed at rest (AES-256-GCM, in records), with the keys of `SECRET_KEYS`: what ArchiveDisk writes, so
 * a kept archive (a private repository's too) is never on disk in the clear, and memory stays bounded by one
 * record however large the archive.
 *
 * A sealed file is a header, `MAGIC | kid length (1 byte) | kid | salt (32 random bytes)`, then records of
 * `RECORD_PLAIN_BYTES` of the archive each sealed with its 16-byte tag; the last record is shorter (empty when the
 * archive's length is a multiple of a record), so a full record is never the last and a file cut at a record's
 * end fails. Each file has its own key, derived (HKDF-SHA256, info `repomarket/archives/v1`, the salt) from the
 * `SECRET_KEYS` key its header names, so rotation works as for sealed tokens: the first key seals, every listed
 * one opens. Each record's nonce is its index and whether it is the last (the STREAM construction); its
 * additional data is the header and the file's name, so records cannot be reordered, dropped, moved to another
 * file, or a file to another name, without failing.
 */
const MAGIC = Buffer.from("repomarket-archive/1\n", "ascii")
const SALT_BYTES = 32
const TAG_BYTES = 16
/** Plain bytes per record. */
export const RECORD_PLAIN_BYTES = 64 * 1024
/** Bytes of a full sealed record. */
export const RECORD_BYTES = RECORD_PLAIN_BYTES + TAG_BYTES
/** The most a header can take: enough to read it in one go. */
export const MAX_HEADER_BYTES = MAGIC.length + 1 + 32 + SALT_BYTES
const INFO = "repomarket/archives/v1"

const fileKey = (key: Redacted.Redacted<Uint8Array>, salt: Buffer) => Buffer.from(hkdfSync("sha256", Redacted.value(key), salt, INFO, 32))

const nonceOf = (index: number, last: boolean) => {
  const nonce = Buffer.alloc(12)
  nonce.writeUIntBE(index, 5, 6)
  nonce[11] = last ? 1 : 0
  return nonce
}

/** How many bytes an archive of `size` bytes takes sealed under the key `kid`. */
export const sealedSize = (kid: string, size: number): number =>
  MAGIC.length + 1 + Buffer.byteLength(kid, "ascii") + SALT_BYTES + size + (Math.floor(size / RECORD_PLAIN_BYTES) + 1) * TAG_BYTES

/** One archive being sealed: its header, then records as bytes come, then the last record. */
export interface Sealing {
  readonly header: Buffer
  /** The full records `bytes` completes (none while less than a record is pending). */
  readonly push: (bytes: Uint8Array) => Array<Buffer>
  /** The last record: what is pending, sealed as the last. */
  readonly end: () => Buffer
}

/** One sealed archive being opened, record by record, after its header. */
export interface Opening {
  /** The header's length: where the records start. */
  readonly headerBytes: number
  /** The plain bytes of the next record; throws when it does not authenticate. */
  readonly open: (record: Buffer, last: boolean) => Buffer
}

export class ArchiveSeal {
  constructor(private readonly ring: KeyRing) {}

  /** The id of the key that seals now. */
  get kid(): string {
    return this.ring.primary.kid
  }

  /** Seals an archive kept under `name` (its file's name, bound into every record). */
  seal(name: string): Sealing {
    const { key: master, kid } = this.ring.primary
    const salt = randomBytes(SALT_BYTES)
    const kidBytes = Buffer.from(kid, "ascii")
    const header = Buffer.concat([MAGIC, Buffer.from([kidBytes.length]), kidBytes, salt])
    const aad = Buffer.concat([header, Buffer.from(name, "utf8")])
    const key = fileKey(master, salt)
    let index = 0
    let pending: Array<Uint8Array> = []
    let pendingBytes = 0
    const record = (plain: Buffer, last: boolean) => {
      const cipher = createCipheriv("aes-256-gcm", key, nonceOf(index++, last), { authTagLength: TAG_BYTES })
      cipher.setAAD(aad)
      return Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()])
    }
    return {
      header,
      push: (bytes) => {
        const out: Array<Buffer> = []
        let at = 0
        while (pendingBytes + bytes.length - at >= RECORD_PLAIN_BYTES) {
          const take = RECORD_PLAIN_BYTES - pendingBytes
          pending.push(bytes.subarray(at, at + take))
          at += take
          out.push(record(Buffer.concat(pending, RECORD_PLAIN_BYTES), false))
          pending = []
          pendingBytes = 0
        }
        if (at < bytes.length) {
          // Copied: the caller may reuse its buffer.
          pending.push(Buffer.from(bytes.subarray(at)))
          pendingBytes += bytes.length - at
        }
        return out
      },
      end: () => {
        const last = record(Buffer.concat(pending, pendingBytes), true)
        pending = []
        pendingBytes = 0
        return last
      }
    }
  }

  /**
   * Opens an archive kept under `name` from the start of its file (`head`: its first `MAX_HEADER_BYTES`, or all of
   * it when shorter). Null when it is not a sealed archive, or names a key `SECRET_KEYS` no longer lists.
   */
  open(name: string, head: Buffer): Opening | null {
    if (head.length < MAGIC.length + 1 || !head.subarray(0, MAGIC.length).equals(MAGIC)) return null
    const kidLength = head[MAGIC.length]!
    const headerBytes = MAGIC.length + 1 + kidLength + SALT_BYTES
    if (head.length < headerBytes) return null
    const kid = head.subarray(MAGIC.length + 1, MAGIC.length + 1 + kidLength).toString("ascii")
    const master = KID.test(kid) ? this.ring.byKid.get(kid) : undefined
    if (master === undefined) return null
    const header = head.subarray(0, headerBytes)
    const aad = Buffer.concat([header, Buffer.from(name, "utf8")])
    const key = fileKey(master, header.subarray(headerBytes - SALT_BYTES))
    let index = 0
    return {
      headerBytes,
      open: (record, last) => {
        if (record.length < TAG_BYTES) throw new Error("a sealed record is shorter than its tag")
        const decipher = createDecipheriv("aes-256-gcm", key, nonceOf(index++, last), { authTagLength: TAG_BYTES })
        decipher.setAAD(aad)
        decipher.setAuthTag(record.subarray(record.length - TAG_BYTES))
        return Buffer.concat([decipher.update(record.subarray(0, record.length - TAG_BYTES)), decipher.final()])
      }
    }
  }
}
