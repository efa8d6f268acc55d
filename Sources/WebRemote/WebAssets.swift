import Hummingbird

/// The page's files, embedded in the binary (Package.swift's `.embedInCode`): a web remote that works
/// offline, with nothing fetched from elsewhere.
enum WebAssets {
    struct Asset: Sendable {
        let bytes: [UInt8]
        let contentType: String
    }

    /// The assets by the path they are served at.
    static let byPath: [String: Asset] = [
        "/": Asset(bytes: PackageResources.index_html, contentType: "text/html; charset=utf-8"),
        "/app.css": Asset(bytes: PackageResources.app_css, contentType: "text/css; charset=utf-8"),
        "/app.js": Asset(bytes: PackageResources.app_js, contentType: "text/javascript; charset=utf-8"),
        "/icon.svg": Asset(bytes: PackageResources.icon_svg, contentType: "image/svg+xml"),
        "/api/openapi.yaml": Asset(bytes: PackageResources.openapi_yaml, contentType: "application/yaml"),
    ]
}
