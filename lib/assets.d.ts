// Files imported `with { type: "file" }` resolve to a path (under /$bunfs in a compiled binary).
declare module "*.so" {
  const path: string;
  export default path;
}
