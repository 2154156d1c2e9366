/** The configured model a name given by the user (`--model`, `/model`) means. */

/** An exact id, or the part after `provider/`. */
export function matchModel(requested: string, models: string[]): string | undefined {
  return models.find((m) => m === requested) ?? models.find((m) => m.endsWith(`/${requested}`));
}
