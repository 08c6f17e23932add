// What services/bundle.mjs bundles in place of zod's locales index (zod/v4/locales/index.js): English only
// (zodEnglishOnly in services/bundle-plugins.mjs).
export { default as en } from "zod/v4/locales/en.js";
