/*
 * The README and docs/ as a newcomer reads them: the README stays short (read in five minutes), names every page
 * of docs/, and every relative link in README.md and docs/ leads to a file that exists (and, with a `#`, to a
 * heading of that file). A clone has nothing outside the repository, so no link may leave it.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { describe, expect, it } from "vitest"

const ROOT = resolve(import.meta.dirname, "../..")

/** README.md and every Markdown file under docs/, as paths relative to the repository. */
const markdownFiles = (): ReadonlyArray<string> => {
  const found: Array<string> = ["README.md"]
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith(".md")) found.push(path)
    }
  }
  walk("docs")
  return found
}

/** The text without fenced code blocks and inline code spans (a link written there is an example, not a link). */
const prose = (markdown: string): string =>
  markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "").replace(/`[^`\n]*`/g, "")

/** GitHub's anchors for a file's headings (lower case, punctuation dropped, spaces as `-`, repeats numbered). */
export const anchorsOf = (markdown: string): ReadonlySet<string> => {
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "")
  for (const [, heading] of withoutFences.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = heading!
      .replace(/`/g, "")
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-")
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    anchors.add(n === 0 ? base : `${base}-${n}`)
  }
  return anchors
}

interface Link {
  readonly file: string
  readonly target: string
}

/** Every link of a file whose target is not an absolute URL (`[text](target)`, `[text]: target`). */
const relativeLinks = (file: string): ReadonlyArray<Link> => {
  const text = prose(readFileSync(join(ROOT, file), "utf8"))
  const targets = [
    ...[...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!),
    ...[...text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)].map((m) => m[1]!)
  ]
  return targets.filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t)).map((target) => ({ file, target }))
}

/** What is wrong with a link, or null when it resolves. */
const problemOf = ({ file, target }: Link): string | null => {
  const [pathPart, anchor] = target.split("#", 2) as [string, string | undefined]
  const path = pathPart === "" ? join(ROOT, file) : resolve(join(ROOT, dirname(file)), decodeURIComponent(pathPart))
  if (relative(ROOT, path).startsWith("..")) return "leaves the repository (a clone has nothing there)"
  if (!existsSync(path)) return "no such file"
  if (anchor === undefined || anchor === "") return null
  if (statSync(path).isDirectory() || !path.endsWith(".md")) return "an anchor into something that is not Markdown"
  return anchorsOf(readFileSync(path, "utf8")).has(anchor.toLowerCase()) ? null : `no heading #${anchor} there`
}

describe("README.md and docs/", () => {
  const files = markdownFiles()

  it("every relative link leads to a file that exists, and every anchor to one of its headings", () => {
    const links = files.flatMap(relativeLinks)
    expect(links.length).toBeGreaterThan(50)
    const broken = links.flatMap((link) => {
      const problem = problemOf(link)
      return problem === null ? [] : [`${link.file}: (${link.target}) ${problem}`]
    })
    expect(broken).toEqual([])
  })

  it("the link check itself sees a missing file, a missing heading and a way out of the repository", () => {
    expect(problemOf({ file: "README.md", target: "docs/no-such-page.md" })).toBe("no such file")
    expect(problemOf({ file: "README.md", target: "docs/settings.md#no-such-heading" })).toBe("no heading #no-such-heading there")
    expect(problemOf({ file: "README.md", target: "../shared/spec/service-spec.md" })).toMatch(/leaves the repository/)
    expect(problemOf({ file: "docs/settings.md", target: "../README.md" })).toBeNull()
    expect([...anchorsOf("# A page\n## Several hosts, every core\n## `LOG_FORMAT` (json)\n## Several hosts, every core\n")])
      .toEqual(["a-page", "several-hosts-every-core", "log_format-json", "several-hosts-every-core-1"])
  })

  it("the README is read in five minutes: at most 250 lines, and no line over 200 characters outside tables and code", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8")
    expect(readme.trimEnd().split("\n").length).toBeLessThanOrEqual(250)
    const long = prose(readme).split("\n").filter((l) => l.length > 200 && !l.startsWith("|"))
    expect(long).toEqual([])
  })

  it("the README links every page of docs/, and each page starts with its title and what it is for", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8")
    const pages = readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md"))
    expect(pages.filter((page) => !readme.includes(`](docs/${page}`))).toEqual([])
    for (const file of files.filter((f) => f.startsWith("docs/"))) {
      const [title, blank, purpose] = readFileSync(join(ROOT, file), "utf8").split("\n")
      expect(title, file).toMatch(/^# \S/)
      expect(blank, file).toBe("")
      expect(purpose, file).toMatch(/^[A-Z`*[(]/)
    }
  })
})
