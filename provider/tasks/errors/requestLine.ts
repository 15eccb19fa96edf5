// How a request is named in a message: its method and path, without the query. A lookup's query is a
// long run of URL-encoded filter text (`filter=hciClusterUuid%20eq%20'126f...'%20and%20...`) that says
// nothing a reader needs; the error's own field keeps the whole path for programs. Pure.

/** `GET /virtualization/v1beta1/datastores` for a path or URL with or without a query. */
export function requestLine(method: string, pathOrUrl: string): string {
    let path = pathOrUrl;
    try {
        path = new URL(pathOrUrl, "http://unused.invalid").pathname;
    } catch {
        path = pathOrUrl.split("?")[0] ?? pathOrUrl;
    }
    return `${method} ${path}`;
}

/** The query of a path or URL, decoded and cut to `max` characters; undefined when there is none. */
export function readableQuery(pathOrUrl: string, max = 200): string | undefined {
    const at = pathOrUrl.indexOf("?");
    if (at < 0 || at === pathOrUrl.length - 1) return undefined;
    const raw = pathOrUrl.slice(at + 1);
    let text: string;
    try {
        text = decodeURIComponent(raw);
    } catch {
        text = raw;
    }
    return text.length > max ? `${text.slice(0, max)}...` : text;
}
