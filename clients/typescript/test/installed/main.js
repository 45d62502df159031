// The package's main entry and nothing else, bundled for the browser.
export * from "@ricochet/client";
