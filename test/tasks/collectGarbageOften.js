// Preloaded (`node --expose-gc -r`) into the provider process of datastoreHostileApi.test.ts: a full
// garbage collection every 20 ms, as a provider process that has run a while has them at any moment.
// undici holds a request weakly once its headers are in; a collection is what stops an abort from
// reaching a body that dribbles, so the test must not depend on when one happens to come.
const timer = setInterval(() => global.gc(), 20);
timer.unref();
