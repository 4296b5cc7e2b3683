import { useState } from "react";
import { Link, useNavigate, useParams } from "react-router-dom";
import {
  templateLabel,
  useAssignTags,
  useDeleteTags,
  useDeleteTemplate,
  useTemplate,
  useTemplateTags,
  useUpdateTemplate,
} from "../../api/templates.js";
import { ConfirmDialog, FormDialog } from "../../components/dialog.js";
import { formatMiB, formatTime } from "../../components/format.js";
import { Pager, usePager } from "../../components/pager.js";
import { Empty, ErrorNotice, Loading, StateBadge } from "../../components/status.js";
import { RelativeTime } from "../../components/time.js";
import { OwnerBadge } from "./templates-page.js";

function splitTags(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((t) => t.trim())
    .filter(Boolean);
}

/** A build's ID: a link to its log for the team's own templates (only a template's team reads its logs). */
function BuildLink({ base, buildID, owned }: { base: string; buildID: string; owned: boolean }) {
  if (!owned) return <span className="mono">{buildID}</span>;
  return (
    <Link className="mono" to={`${base}/builds/${encodeURIComponent(buildID)}`}>
      {buildID}
    </Link>
  );
}

/** A template: its builds, tags, visibility and warm pool (the last three only for the team's own). */
export function TemplatePage() {
  const templateID = useParams().templateID!;
  const navigate = useNavigate();
  const pager = usePager();
  const template = useTemplate(templateID, pager.current);
  const tags = useTemplateTags(templateID);
  const update = useUpdateTemplate(templateID);
  const assign = useAssignTags();
  const deleteTags = useDeleteTags();
  const remove = useDeleteTemplate();
  const [deleting, setDeleting] = useState(false);
  const [untagging, setUntagging] = useState<string>();
  const [tagging, setTagging] = useState(false);
  const [fromTag, setFromTag] = useState("");
  const [newTags, setNewTags] = useState("");
  const [poolOpen, setPoolOpen] = useState(false);
  const [poolMin, setPoolMin] = useState("");
  const [poolMax, setPoolMax] = useState("");

  const t = template.data?.items;
  const name = t?.names[0] ?? t?.aliases[0];
  // another's (the platform's, another team's public one): used, never changed, from here;
  // its builds' logs are its team's
  const owned = t?.owner === "team";
  const base = `/templates/${encodeURIComponent(templateID)}`;
  const poolValid = [poolMin, poolMax].every(
    (v) => v === "" || (Number.isInteger(Number(v)) && Number(v) >= 0),
  );

  return (
    <div className="page">
      <div className="breadcrumbs">
        <Link to="/templates">Templates</Link> / {t ? templateLabel(t) : templateID}
      </div>
      <header className="page-header">
        <h1>{t ? templateLabel(t) : templateID}</h1>
        {t && <span className="mono faint">{t.templateID}</span>}
        {t && <OwnerBadge owner={t.owner} />}
        <span className="spacer" />
        {t && owned && (
          <>
            <button
              type="button"
              onClick={() => update.mutate({ public: !t.public })}
              disabled={update.isPending}
              data-testid="template-visibility"
            >
              {t.public ? "Make team-only" : "Make public"}
            </button>
            <button
              type="button"
              onClick={() => {
                setPoolMin(t.warmPool?.min?.toString() ?? "");
                setPoolMax(t.warmPool?.max?.toString() ?? "");
                update.reset();
                setPoolOpen(true);
              }}
            >
              Warm pool…
            </button>
            <button
              type="button"
              className="danger"
              onClick={() => {
                remove.reset();
                setDeleting(true);
              }}
              data-testid="template-delete"
            >
              Delete
            </button>
          </>
        )}
      </header>
      <ErrorNotice error={template.error} title="Could not read the template" />
      {!poolOpen && <ErrorNotice error={update.error} title="Could not update the template" />}
      {t && !owned && (
        <p className="muted" style={{ margin: 0 }} data-testid="template-not-owned">
          {t.owner === "system"
            ? "Shipped with the platform: every team's sandboxes may start from it; the platform's operator builds it (x template install)."
            : "Another team's public template: this team's sandboxes may start from it; only that team changes it."}
        </p>
      )}
      {template.isPending ? (
        <Loading />
      ) : t ? (
        <>
          <div className="cards">
            <div className="card">
              <div className="label">Visibility</div>
              <div className="value">{t.public ? "Public" : "Team"}</div>
              <div className="sub">{t.public ? "any team may use it" : "only this team"}</div>
            </div>
            <div className="card">
              <div className="label">Sandboxes started</div>
              <div className="value">{t.spawnCount}</div>
              <div className="sub">
                last <RelativeTime iso={t.lastSpawnedAt} />
              </div>
            </div>
            <div className="card">
              <div className="label">Warm pool</div>
              <div className="value">
                {t.warmPool?.min ?? "default"} – {t.warmPool?.max ?? "default"}
              </div>
              <div className="sub">ready sandboxes kept, min – max</div>
            </div>
            <div className="card">
              <div className="label">Names</div>
              <div className="sub">
                {t.names.map((n) => (
                  <span key={n} className="tag">
                    {n}
                  </span>
                ))}
              </div>
            </div>
          </div>

          <div className="row">
            <h2>Tags</h2>
            <span className="grow" />
            {owned && (
              <button
                type="button"
                className="small"
                onClick={() => {
                  assign.reset();
                  setFromTag(tags.data?.[0]?.tag ?? "");
                  setNewTags("");
                  setTagging(true);
                }}
                disabled={!tags.data?.length}
              >
                Add tags…
              </button>
            )}
          </div>
          <ErrorNotice error={tags.error} title="Could not list tags" />
          {tags.data && tags.data.length === 0 ? (
            <div className="panel">
              <Empty title="No tags" />
            </div>
          ) : (
            <div className="table-wrap">
              <table aria-label="Tags">
                <thead>
                  <tr>
                    <th>Tag</th>
                    <th>Build</th>
                    <th>Assigned</th>
                    <th>
                      <span className="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {tags.data?.map((tag) => (
                    <tr key={tag.tag}>
                      <td>
                        <span className="tag">{tag.tag}</span>
                      </td>
                      <td>
                        <BuildLink base={base} buildID={tag.buildID} owned={owned} />
                      </td>
                      <td>
                        <RelativeTime iso={tag.createdAt} />
                      </td>
                      <td className="actions">
                        {owned && (
                          <button
                            type="button"
                            className="small danger"
                            onClick={() => {
                              deleteTags.reset();
                              setUntagging(tag.tag);
                            }}
                            aria-label={`Remove tag ${tag.tag}`}
                          >
                            Remove
                          </button>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}

          <h2>Builds</h2>
          {t.builds.length === 0 ? (
            <div className="panel">
              <Empty title="No builds" />
            </div>
          ) : (
            <div className="table-wrap">
              <table aria-label="Builds" data-testid="build-table">
                <thead>
                  <tr>
                    <th>Build</th>
                    <th>Status</th>
                    <th>Created</th>
                    <th>Finished</th>
                    <th className="num">Resources</th>
                    <th>envd</th>
                  </tr>
                </thead>
                <tbody>
                  {t.builds.map((b) => (
                    <tr key={b.buildID} data-testid={`build-row-${b.buildID}`}>
                      <td>
                        <BuildLink base={base} buildID={b.buildID} owned={owned} />
                      </td>
                      <td>
                        <StateBadge state={b.status} />
                      </td>
                      <td title={formatTime(b.createdAt)}>
                        <RelativeTime iso={b.createdAt} />
                      </td>
                      <td>{b.finishedAt ? formatTime(b.finishedAt) : "—"}</td>
                      <td className="num">
                        {b.cpuCount} vCPU · {formatMiB(b.memoryMB)}
                        {b.diskSizeMB ? ` · ${formatMiB(b.diskSizeMB)}` : ""}
                      </td>
                      <td>{b.envdVersion ?? "—"}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <Pager pager={pager} nextToken={template.data?.nextToken} count={t.builds.length} label="builds" />
        </>
      ) : null}

      <ConfirmDialog
        open={deleting}
        onClose={() => setDeleting(false)}
        title={`Delete template ${name ?? templateID}?`}
        message="Its builds, tags and names go with it. Refused while sandboxes started from it run or are paused, or while it builds."
        confirmLabel="Delete template"
        onConfirm={() => remove.mutate(templateID, { onSuccess: () => navigate("/templates") })}
        pending={remove.isPending}
        error={remove.error}
        testId="delete-template-dialog"
      />
      <ConfirmDialog
        open={untagging !== undefined}
        onClose={() => setUntagging(undefined)}
        title={`Remove tag ${untagging ?? ""}?`}
        message="The build stays; only the tag goes. Sandboxes can no longer be created by this tag."
        confirmLabel="Remove tag"
        onConfirm={() =>
          name &&
          untagging &&
          deleteTags.mutate({ name, tags: [untagging] }, { onSuccess: () => setUntagging(undefined) })
        }
        pending={deleteTags.isPending}
        error={deleteTags.error}
      />
      <FormDialog
        open={tagging}
        onClose={() => setTagging(false)}
        title="Add tags"
        submitLabel="Add tags"
        onSubmit={() =>
          name &&
          assign.mutate(
            { target: `${name}:${fromTag}`, tags: splitTags(newTags) },
            { onSuccess: () => setTagging(false) },
          )
        }
        pending={assign.isPending}
        error={assign.error}
        invalid={!fromTag || splitTags(newTags).length === 0}
      >
        <label className="field">
          <span>New tags (comma-separated)</span>
          <input
            value={newTags}
            onChange={(e) => setNewTags(e.target.value)}
            data-autofocus
            placeholder="v2, stable"
          />
        </label>
        <label className="field">
          <span>Pointing at the build of tag</span>
          <select value={fromTag} onChange={(e) => setFromTag(e.target.value)}>
            {tags.data?.map((tag) => (
              <option key={tag.tag} value={tag.tag}>
                {tag.tag} ({tag.buildID.slice(0, 8)})
              </option>
            ))}
          </select>
          <span className="hint">A tag of the same name elsewhere is moved here.</span>
        </label>
      </FormDialog>
      <FormDialog
        open={poolOpen}
        onClose={() => setPoolOpen(false)}
        title="Warm pool"
        submitLabel="Save"
        onSubmit={() =>
          update.mutate(
            {
              warmPool: {
                ...(poolMin !== "" ? { min: Number(poolMin) } : {}),
                ...(poolMax !== "" ? { max: Number(poolMax) } : {}),
              },
            },
            { onSuccess: () => setPoolOpen(false) },
          )
        }
        pending={update.isPending}
        error={update.error}
        invalid={!poolValid}
      >
        <p className="muted" style={{ margin: 0 }}>
          Ready sandboxes kept for this template's builds, so creates need not boot; the pool sizes itself to
          demand between the two. Leave a field empty for the platform's default.
        </p>
        <div className="row">
          <label className="field grow">
            <span>Minimum</span>
            <input
              type="number"
              min={0}
              max={64}
              value={poolMin}
              onChange={(e) => setPoolMin(e.target.value)}
              data-autofocus
            />
          </label>
          <label className="field grow">
            <span>Maximum</span>
            <input
              type="number"
              min={0}
              max={64}
              value={poolMax}
              onChange={(e) => setPoolMax(e.target.value)}
            />
          </label>
        </div>
      </FormDialog>
    </div>
  );
}
