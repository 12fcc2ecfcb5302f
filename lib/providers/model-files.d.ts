// Model weight shards and wasm binaries are imported `with { type: "file" }`: the import is their path.
declare module "*of7" {
  const path: string;
  export default path;
}
declare module "*.wasm" {
  const path: string;
  export default path;
}
