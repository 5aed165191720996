/**
 * GitHub as the code host (repo facts, tree, README, archives; ETag caching, rate-limit handling) and as the identity provider of the code-host connection (OAuth with PKCE).
 *
 * @packageDocumentation
 */
export { CodeHostGithub, CodeHostGithubWith, makeCodeHostGithub } from "../../adapters/github/CodeHostGithub.js"
export { CodeHostIdentityGithub } from "../../adapters/github/CodeHostIdentityGithub.js"
export { type GithubEndpoints, githubEndpoints, githubOAuthApp, githubServerToken, type OAuthApp } from "../../adapters/github/GithubConfig.js"
export { DEFAULT_TUNING, type GithubTuning } from "../../adapters/github/GithubClient.js"

// Types of the core (the same as `repomarket`'s) and of this family that this entry's signatures name, so a
// consumer can name them too. Types only: the values come from the entry that owns them.
export type { CodeHost } from "../../ports/CodeHost.js"
export type { CodeHostIdentity } from "../../ports/CodeHostIdentity.js"
export type { PublicOrigin } from "../../ports/PublicOrigin.js"
export type { ArchiveDigest } from "../../domain/ReceiptClaims.js"
export type { RepoRef } from "../../domain/Ids.js"
export type { RepoTree } from "../../domain/Goods.js"
export type { CodeHostError, OwnerRepo, Readme, RepoInfo } from "../../ports/CodeHost.js"
export type { CodeHostFailure, CutPurpose, TreeEntry } from "../../ports/CodeHost.js"
