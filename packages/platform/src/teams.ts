import type { Store, Team } from "./store/index.js";
import { SYSTEM_NAMESPACE } from "./templates/base-template.js";

/** Teams of users: every team but the one owning the platform's own templates. */
export async function userTeams(store: Store): Promise<Team[]> {
  return (await store.teams.listTeams()).filter((t) => t.namespace !== SYSTEM_NAMESPACE);
}

/** The first user team, made on the platform's first start. */
export async function defaultTeam(store: Store): Promise<Team> {
  const [team] = await userTeams(store);
  if (!team) throw new Error("no team: start the platform once (x serve) to create the first one");
  return team;
}
