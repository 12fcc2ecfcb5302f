// C sources are imported `with { type: "file" }` and compiled at run time by bun:ffi's cc: the import is their path.
declare module "*.c" {
  const path: string;
  export default path;
}
