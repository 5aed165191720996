/*
 * The front door (docs/decisions/0024-front-door.md): the repo page as JSON and a checkout's 402 challenge,
 * served from memory by the Node server before a request reaches the app. Its parts live under `frontdoor/`:
 * the remembered answers (Cache.ts: what is served, for how long), the service, its layer and the app's side
 * that remembers (Service.ts), the forgetting on every write and on other hosts' announcements
 * (Invalidation.ts). The Node request path in front of the app is the Node host's: hosts/node/FrontDoorServer.ts.
 */
export { type FrontDoorCache, type FrontDoorOptions, type FrontDoorStats, makeFrontDoor } from "./frontdoor/Cache.js"
export { FrontDoorFollowsOtherHosts, InvalidatingStorage } from "./frontdoor/Invalidation.js"
export { FrontDoor, FrontDoorLive, rememberAnswers } from "./frontdoor/Service.js"
