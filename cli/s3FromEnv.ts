/** S3 settings of the commands that read a build directly (no config file): from MMIF_S3_ENDPOINT. */
export function s3FromEnv(): { endpoint?: string; forcePathStyle?: boolean } {
  const endpoint = process.env.MMIF_S3_ENDPOINT || undefined;
  return { endpoint, forcePathStyle: endpoint ? true : undefined };
}
