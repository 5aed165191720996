/**
 * GitHub as the code host (repo facts, tree, README, archives; ETag caching, rate-limit handling) and as the identity provider of the code-host connection (OAuth with PKCE).
 *
 * @packageDocumentation
 */
export { CodeHostGithub, CodeHostGithubWith, makeCodeHostGithub } from "../../adapters/github/CodeHostGithub.js"
export { CodeHostIdentityGithub } from "../../adapters/github/CodeHostIdentityGithub.js"
export { type GithubEndpoints, githubEndpoints, githubOAuthApp, githubServerToken, type OAuthApp } from "../../adapters/github/GithubConfig.js"
export { DEFAULT_TUNING, type GithubTuning } from "../../adapters/github/GithubClient.js"
