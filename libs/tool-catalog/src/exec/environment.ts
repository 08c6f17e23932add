/**
 * The environment a command sees: an allowlist of harmless variables from the
 * executor's own environment, then a deny filter on names that look like
 * credentials, so a secret can never leak even if it matches the allowlist.
 */
const ALLOWED = ["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "USER", "LOGNAME", "SHELL"];
const DENIED = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION/i;
const DENIED_PREFIX = /^(MONIRO_|ANTHROPIC_|OPENAI_|AWS_|GOOGLE_|AZURE_|NATS_|REDIS_)/i;

export function isSecretName(name: string): boolean {
  return DENIED.test(name) || DENIED_PREFIX.test(name);
}

export function scrubbedEnvironment(
  source: NodeJS.ProcessEnv,
  workspace: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ALLOWED) {
    const value = source[name];
    if (value !== undefined && !isSecretName(name)) env[name] = value;
  }
  env.PATH ??= "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  env.LANG ??= "C.UTF-8";
  env.TERM ??= "dumb";
  env.HOME = workspace;
  env.PWD = workspace;
  for (const [name, value] of Object.entries(extra)) if (!isSecretName(name)) env[name] = value;
  return env;
}
