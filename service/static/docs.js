// /docs: Swagger UI (installed from the package registry with flask-swagger-ui)
// over this service's own contract.  "Try it out" sends requests to this server.
window.addEventListener("load", () => {
  window.ui = SwaggerUIBundle({
    url: "/openapi.yaml",
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: "StandaloneLayout",
  });
});
