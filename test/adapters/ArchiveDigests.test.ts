import { createHash } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Either, Option, Stream } from "effect"
import { ArchiveDigests, digestOf } from "../../adapters/crypto/ArchiveDigests.js"
import { CodeHostMemory, CodeHostMemoryControl } from "../../adapters/memory/CodeHostMemory.js"
import { RepoRef } from "../../domain/Ids.js"
import { CodeHost, type CodeHostError, wholeArchive, wholeArchiveBytes } from "../../ports/CodeHost.js"

const REF = new RepoRef({ owner: "Octo", name: "Widget" })
const SHA = "0123456789abcdef0123456789abcdef01234567"
const bytes = (text: string) => new TextEncoder().encode(text)
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")
const streamOf = (...parts: ReadonlyArray<string>): Stream.Stream<Uint8Array, CodeHostError> => Stream.fromIterable(parts.map(bytes))
const run = (stream: Stream.Stream<Uint8Array, CodeHostError>) =>
  Effect.runSync(Effect.either(Effect.map(Stream.runCollect(stream), (c) => Buffer.concat(Chunk.toReadonlyArray(c)).toString("utf8"))))

describe("ArchiveDigests", () => {
  it("learns a commit's digest from its first archive that streams to its end, under any spelling of the repo", () => {
    const digests = new ArchiveDigests()
    const archive = digests.through(REF, SHA, streamOf("ab", "cd"))
    expect(digests.get(REF, SHA)).toBeUndefined()
    expect(run(archive)).toEqual(Either.right("abcd"))
    expect(digests.get(new RepoRef({ owner: "octo", name: "WIDGET" }), SHA.toUpperCase())).toEqual({ sha256: sha256("abcd"), size: 4 })
    expect(digestOf(bytes("abcd"))).toEqual({ sha256: sha256("abcd"), size: 4 })
  })

  it("learns nothing from a broken archive, nor of a branch name", () => {
    const digests = new ArchiveDigests()
    const broken = Stream.concat(streamOf("ab"), Stream.fail({ _tag: "CodeHostError", reason: "unavailable", message: "cut" } as unknown as CodeHostError))
    expect(Either.isLeft(run(digests.through(REF, SHA, broken)))).toBe(true)
    expect(digests.get(REF, SHA)).toBeUndefined()
    expect(run(digests.through(REF, "main", streamOf("ab")))).toEqual(Either.right("ab"))
    expect(digests.get(REF, "main")).toBeUndefined()
  })

  it("cuts off, at its end, a later archive of the commit with other bytes; the same bytes pass", () => {
    const digests = new ArchiveDigests()
    run(digests.through(REF, SHA, streamOf("abcd")))
    expect(run(digests.through(REF, SHA, streamOf("a", "bcd")))).toEqual(Either.right("abcd"))
    const other = run(digests.through(REF, SHA, streamOf("abce")))
    expect(Either.isLeft(other) && other.left.reason).toBe("unavailable")
    expect(Either.isLeft(run(digests.through(REF, SHA, streamOf("abcde"))))).toBe(true)
    expect(digests.get(REF, SHA)).toEqual({ sha256: sha256("abcd"), size: 4 })
  })

  it("checks an archive held whole at once and keeps it whole (one write, with its length)", () => {
    const digests = new ArchiveDigests()
    const first = digests.through(REF, SHA, wholeArchive(bytes("abcd")))
    expect(wholeArchiveBytes(first)).toEqual(bytes("abcd"))
    expect(digests.get(REF, SHA)).toEqual({ sha256: sha256("abcd"), size: 4 })
    expect(wholeArchiveBytes(digests.through(REF, SHA, wholeArchive(bytes("abcd"))))).toEqual(bytes("abcd"))
    const other = digests.through(REF, SHA, wholeArchive(bytes("abce")))
    expect(wholeArchiveBytes(other)).toBeUndefined()
    expect(Either.isLeft(run(other))).toBe(true)
  })

  it("keeps at most maxEntries digests, the oldest dropped first", () => {
    const digests = new ArchiveDigests(2)
    const shas = ["a", "b", "c"].map((c) => c.repeat(40))
    for (const sha of shas) run(digests.through(REF, sha, streamOf(sha)))
    expect(shas.map((sha) => digests.get(REF, sha) !== undefined)).toEqual([false, true, true])
  })
})

describe("the in-memory code host's archives", () => {
  const PUSHED = "fedcba9876543210fedcba9876543210fedcba98"
  it.effect("are cut from commits the repo had only, each with its files then; the digest is known once one was cut", () =>
    Effect.gen(function*() {
      const host = yield* CodeHost
      const read = (sha: string) => Effect.either(Effect.map(Stream.runCollect(host.archive(REF, sha, Option.none())), (c) => Buffer.concat(Chunk.toReadonlyArray(c)).toString("utf8")))
      expect(yield* host.archiveDigest(REF, SHA)).toEqual(Option.none())
      const first = yield* read(SHA)
      expect(first).toEqual(Either.right("0123456 a.txt\none\n"))
      expect(yield* host.archiveDigest(REF, SHA)).toEqual(Option.some({ sha256: sha256("0123456 a.txt\none\n"), size: 18 }))
      // A commit the repository never had (another repository's, or made up) is not served.
      const unknown = yield* read("a".repeat(40))
      expect(Either.isLeft(unknown) && unknown.left.reason).toBe("repo_not_found")
      // A push: the new head has its files; the old commit keeps its own.
      yield* Effect.flatMap(CodeHostMemoryControl, (c) => c.put({ owner: "Octo", name: "Widget", headSha: PUSHED, files: { "a.txt": "two" } }))
      expect(yield* read(PUSHED)).toEqual(Either.right("fedcba9 a.txt\ntwo\n"))
      expect(yield* read(SHA)).toEqual(Either.right("0123456 a.txt\none\n"))
    }).pipe(Effect.provide(CodeHostMemory([{ owner: "Octo", name: "Widget", headSha: SHA, files: { "a.txt": "one" } }]))))
})
