// Typings for the part of snappyjs this project uses (the package ships none): sources/parquetStrings.ts.
declare module 'snappyjs' {
  /** Returns the same kind it is given; a Buffer here. */
  function uncompress(compressed: Buffer): Buffer;
  const snappy: { uncompress: typeof uncompress };
  export default snappy;
}
