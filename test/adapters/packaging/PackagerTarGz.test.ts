import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { Cause, Chunk, Effect, Either, Exit, Stream } from "effect"
import { PackagerTarGz, TAR_MTIME, tar } from "../../../adapters/packaging/PackagerTarGz.js"
import { type PackagedFile, Packager } from "../../../ports/Packager.js"

const LONG_DIR = `${"d".repeat(90)}/${"e".repeat(50)}`
const files: ReadonlyArray<PackagedFile> = [
  { path: "octo-widgets-abc1234/MANIFEST.txt", content: "README.md\t120\nsrc/index.ts\t2048\n" },
  { path: "octo-widgets-abc1234/NOTE.txt", content: "Test purchase: no repository bytes. Ünïcödé ✓\n" },
  { path: "octo-widgets-abc1234/deep/er/empty.txt", content: "" },
  { path: `octo-widgets-abc1234/${LONG_DIR}/exactly-512.txt`, content: "x".repeat(512) }
]
const DIRS = [
  "octo-widgets-abc1234/",
  "octo-widgets-abc1234/deep/",
  "octo-widgets-abc1234/deep/er/",
  "octo-widgets-abc1234/dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd/",
  `octo-widgets-abc1234/${LONG_DIR}/`
]

const archive = (input: ReadonlyArray<PackagedFile>) =>
  Effect.gen(function*() {
    const packager = yield* Packager
    const chunks = yield* Stream.runCollect(packager.tarGz(input))
    return Buffer.concat(Chunk.toReadonlyArray(chunks))
  }).pipe(Effect.provide(PackagerTarGz))

const withTmp = <A>(f: (dir: string) => A): A => {
  const dir = mkdtempSync(join(tmpdir(), "packager-"))
  try {
    return f(dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const systemTar = (args: ReadonlyArray<string>) => execFileSync("tar", args, { encoding: "utf8", env: { ...process.env, LC_ALL: "C.UTF-8" } })

describe("PackagerTarGz", () => {
  it.effect("system tar lists every directory and file, in order", () =>
    Effect.gen(function*() {
      const bytes = yield* archive(files)
      withTmp((dir) => {
        writeFileSync(join(dir, "goods.tar.gz"), bytes)
        const listed = systemTar(["-tzf", join(dir, "goods.tar.gz")]).split("\n").filter((l) => l !== "")
        expect(listed).toEqual([DIRS[0], files[0]!.path, files[1]!.path, DIRS[1], DIRS[2], files[2]!.path, DIRS[3], DIRS[4], files[3]!.path])
      })
    }))

  it.effect("system tar extracts the exact contents, files 0644 and directories 0755", () =>
    Effect.gen(function*() {
      const bytes = yield* archive(files)
      withTmp((dir) => {
        writeFileSync(join(dir, "goods.tar.gz"), bytes)
        const out = join(dir, "out")
        execFileSync("mkdir", [out])
        // execFileSync throws when tar exits non-zero (a bad checksum or header); permissions go through the umask.
        execFileSync("tar", ["-xzf", join(dir, "goods.tar.gz"), "-C", out, "--no-same-owner", "--no-same-permissions"])
        for (const file of files) {
          expect(readFileSync(join(out, file.path), "utf8"), file.path).toBe(file.content)
          const st = statSync(join(out, file.path))
          expect(st.mode & 0o777, file.path).toBe(0o644 & ~process.umask())
          expect(Math.floor(st.mtimeMs / 1000), file.path).toBe(TAR_MTIME)
        }
        for (const d of DIRS) expect(statSync(join(out, d)).mode & 0o777, d).toBe(0o755 & ~process.umask())
      })
    }))

  it.effect("is plain gzip around a ustar tar: 512-byte blocks, valid checksums, two zero blocks at the end", () =>
    Effect.gen(function*() {
      const raw = gunzipSync(yield* archive(files.slice(0, 2)))
      // header, dir | header, 1 block | header, 1 block | 2 zero blocks
      expect(raw.length).toBe(512 * (1 + 2 + 2 + 2))
      expect(raw.subarray(raw.length - 1024).every((b) => b === 0)).toBe(true)
      for (const offset of [0, 512, 1536]) {
        const header = raw.subarray(offset, offset + 512)
        expect(header.subarray(257, 263).toString("latin1")).toBe("ustar\0")
        const stored = parseInt(header.subarray(148, 154).toString("latin1"), 8)
        const computed = header.reduce((sum, b, i) => sum + (i >= 148 && i < 156 ? 32 : b), 0)
        expect(stored, `checksum at ${offset}`).toBe(computed)
      }
      expect(raw.subarray(512 + 100, 512 + 107).toString("latin1")).toBe("0000644")
      expect(raw.subarray(100, 107).toString("latin1")).toBe("0000755")
    }))

  it("is reproducible: the same files make the same bytes", () => {
    const a = Either.getOrThrow(tar(files))
    const b = Either.getOrThrow(tar(files))
    expect(Buffer.compare(Buffer.from(a), Buffer.from(b))).toBe(0)
    expect(Either.getOrThrow(tar([{ path: "a.txt", content: "1" }]))).not.toEqual(Either.getOrThrow(tar([{ path: "a.txt", content: "2" }])))
  })

  it("refuses paths that would extract outside the archive root or that ustar cannot hold", () => {
    for (const path of ["/etc/passwd", "../up.txt", "a/../../b", "a//b", "./a", "a/", "", "nul\0byte", `${"p".repeat(101)}`, `${"q".repeat(160)}/x`]) {
      expect(Either.isLeft(tar([{ path, content: "x" }])), JSON.stringify(path)).toBe(true)
    }
    expect(Either.isLeft(tar([{ path: "a.txt", content: "1" }, { path: "a.txt", content: "2" }]))).toBe(true)
    expect(Either.isLeft(tar([{ path: "a", content: "1" }, { path: "a/b", content: "2" }]))).toBe(true)
    expect(Either.isLeft(tar([{ path: "a/b", content: "1" }, { path: "a", content: "2" }]))).toBe(true)
    expect(Either.isRight(tar([{ path: "a/b", content: "1" }, { path: "a/c", content: "2" }]))).toBe(true)
  })

  it.effect("a refused path is a defect of the stream, not an error channel", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(archive([{ path: "../escape", content: "x" }]))
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        expect(Cause.isDie(exit.cause)).toBe(true)
        expect(Cause.pretty(exit.cause)).toContain("unsafe path")
      }
    }))
})
