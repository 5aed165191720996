import { describe, expect, it } from "@effect/vitest"
import { clipUtf8, readmeRenderer, resolveReadmeUrl } from "../../../adapters/github/ReadmeHtml.js"
import { ReadmePackagesModule } from "../../../adapters/LazyModules.js"

const renderReadme = readmeRenderer(await ReadmePackagesModule.defaultValue()())

const ctx = { htmlUrl: "https://github.com/o/r", branch: "main", path: "docs/README.md" }

describe("README rendering", () => {
  it("drops every script vector a README can carry", () => {
    const html = renderReadme(
      [
        "Hello <script>alert(1)</script>",
        "<img src=\"x\" onerror=\"alert(2)\"> <body onload=\"alert(3)\">",
        "[a](javascript:alert(4)) [b](&#106;avascript:alert(5)) <a href=\"JaVaScRiPt:alert(6)\">c</a>",
        "<a href=\"vbscript:x\">d</a> <a href=\"data:text/html;base64,PHNjcmlwdD4=\">e</a>",
        "<svg><script>alert(7)</script></svg> <math><mi xlink:href=\"javascript:alert(8)\">x</mi></math>",
        "<iframe src=\"https://evil.example\"></iframe><object data=\"x\"></object><embed src=\"x\">",
        "<form action=\"https://evil.example\"><input type=\"text\" name=\"q\"><button>go</button></form>",
        "<div style=\"position:fixed\" onclick=\"x()\">styled</div><style>*{}</style>",
        "<img src=\"data:image/png;base64,AAAA\"><img src=\"http://insecure.example/a.png\">"
      ].join("\n\n"),
      ctx
    )
    for (const banned of [
      "<script", "alert(", "onerror", "onload", "onclick", "javascript:", "vbscript:", "data:", "<iframe", "<object",
      "<embed", "<form", "type=\"text\"", "<svg", "<math", "style=", "<style", "http://insecure"
    ]) {
      expect(html, banned).not.toContain(banned)
    }
    expect(html).toContain("Hello")
    expect(html).toContain("styled")
  })

  it("keeps ordinary markdown: headings, code with its language, task lists, tables, details", () => {
    const html = renderReadme(
      "# Title\n\n```ts\nconst a = 1\n```\n\n- [x] done\n- [ ] todo\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n<details><summary>More</summary>text</details>\n",
      ctx
    )
    expect(html).toContain("<h1>Title</h1>")
    expect(html).toContain("<code class=\"language-ts\">")
    expect(html).toContain("<input type=\"checkbox\" disabled checked />")
    expect(html).toContain("<table>")
    expect(html).toContain("<details><summary>More</summary>")
  })

  it("resolves relative links to the repo's blob URL and relative images to its raw files", () => {
    expect(resolveReadmeUrl("guide.md", ctx, "link")).toBe("https://github.com/o/r/blob/main/docs/guide.md")
    expect(resolveReadmeUrl("../LICENSE", ctx, "link")).toBe("https://github.com/o/r/blob/main/LICENSE")
    expect(resolveReadmeUrl("/src/index.ts#L3", ctx, "link")).toBe("https://github.com/o/r/blob/main/src/index.ts#L3")
    expect(resolveReadmeUrl("img/a.png", ctx, "image")).toBe("https://github.com/o/r/raw/main/docs/img/a.png")
    expect(resolveReadmeUrl("#usage", ctx, "link")).toBe("#usage")
    expect(resolveReadmeUrl("mailto:a@example.com", ctx, "link")).toBe("mailto:a@example.com")
    expect(resolveReadmeUrl("//evil.example/x", ctx, "link")).toBeNull()
    expect(resolveReadmeUrl("http://example.com/a.png", ctx, "image")).toBeNull()
    // A test or enterprise host on plain http: relative images cannot be https, so they go.
    expect(resolveReadmeUrl("a.png", { ...ctx, htmlUrl: "http://ghe.local/o/r" }, "image")).toBeNull()
  })

  it("shows a README that is not markdown as preformatted text", () => {
    const html = renderReadme("Title\n=====\n<b>not bold</b>", { ...ctx, path: "README.rst" })
    expect(html).toBe("<pre>Title\n=====\n&lt;b&gt;not bold&lt;/b&gt;</pre>")
  })

  it("clips long READMEs on a character boundary", () => {
    const bytes = new TextEncoder().encode("aé€")
    expect(clipUtf8(bytes, 100)).toBe("aé€")
    expect(clipUtf8(bytes, 4)).toBe("aé")
    expect(clipUtf8(bytes, 5)).toBe("aé")
  })
})
