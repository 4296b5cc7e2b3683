import { useMemo, useRef, useState } from "react";
import { Link } from "react-router-dom";
import {
  type Template,
  type TemplateOwner,
  templateLabel,
  useDeleteTemplate,
  useTemplates,
} from "../../api/templates.js";
import { ConfirmDialog } from "../../components/dialog.js";
import { formatMiB } from "../../components/format.js";
import { useSlashFocus } from "../../components/shortcuts.js";
import { Badge, Empty, ErrorNotice, Loading, StateBadge } from "../../components/status.js";
import { RelativeTime } from "../../components/time.js";

export function templatePath(t: { templateID: string }): string {
  return `/templates/${encodeURIComponent(t.templateID)}`;
}

/** Whose a template is, as a badge: the team's own, shipped with the platform, or another team's public one. */
export function OwnerBadge({ owner }: { owner: TemplateOwner | undefined }) {
  if (owner === "system")
    return (
      <Badge tone="info" title="Installed with the platform: every team may use it, none may change it">
        shipped
      </Badge>
    );
  if (owner === "public")
    return (
      <Badge tone="" title="Another team's, made public: this team may use it, not change it">
        other team
      </Badge>
    );
  return <Badge tone="ok">this team</Badge>;
}

/** The templates the team may use (its own, the platform's, other teams' public ones) with their latest build. */
export function TemplatesPage() {
  const templates = useTemplates();
  const remove = useDeleteTemplate();
  const [deleting, setDeleting] = useState<Template>();
  const [filter, setFilter] = useState("");
  const ref = useRef<HTMLInputElement>(null);
  useSlashFocus(ref);
  const shown = useMemo(() => {
    const needle = filter.trim().toLowerCase();
    return (templates.data ?? []).filter(
      (t) =>
        !needle || [t.templateID, ...t.names, ...t.aliases].some((n) => n.toLowerCase().includes(needle)),
    );
  }, [templates.data, filter]);

  return (
    <div className="page">
      <header className="page-header">
        <h1>Templates</h1>
        <span className="spacer" />
        <label className="field" style={{ minWidth: 240 }}>
          <span className="visually-hidden">Filter templates</span>
          <input
            ref={ref}
            type="search"
            value={filter}
            onChange={(e) => setFilter(e.target.value)}
            placeholder="Filter by name or ID  ( / )"
            data-testid="filter-templates"
          />
        </label>
      </header>
      <p className="muted" style={{ margin: 0 }}>
        Templates are built with the SDK or CLI (<code>Template.build()</code>, <code>x template build</code>
        ); here you follow their builds, manage tags, visibility and warm pools, and delete them. The
        templates shipped with the platform (<code>base</code>, <code>code-interpreter-v1</code>, …) and other
        teams' public ones are listed too: every sandbox may start from them, only their owners change them.
      </p>
      <ErrorNotice error={templates.error} title="Could not list templates" />
      {templates.isPending ? (
        <Loading label="Loading templates…" />
      ) : shown.length === 0 ? (
        <div className="panel">
          <Empty title={filter ? "No template matches" : "No templates yet"} />
        </div>
      ) : (
        <div className="table-wrap">
          <table aria-label="Templates" data-testid="template-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Owner</th>
                <th>ID</th>
                <th>Latest build</th>
                <th>Visibility</th>
                <th className="num">Resources</th>
                <th className="num">Builds</th>
                <th className="num">Sandboxes started</th>
                <th>Last started</th>
                <th>
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {shown.map((t) => (
                <tr key={t.templateID} data-testid={`template-row-${templateLabel(t)}`}>
                  <td>
                    <Link to={templatePath(t)}>{templateLabel(t)}</Link>
                    {t.names.slice(1).map((n) => (
                      <span key={n} className="tag" style={{ marginLeft: 4 }}>
                        {n}
                      </span>
                    ))}
                  </td>
                  <td>
                    <OwnerBadge owner={t.owner} />
                  </td>
                  <td className="mono faint">{t.templateID}</td>
                  <td>
                    <StateBadge state={t.buildStatus} />
                  </td>
                  <td>{t.public ? <Badge tone="info">public</Badge> : <Badge tone="">team</Badge>}</td>
                  <td className="num">
                    {t.cpuCount} vCPU · {formatMiB(t.memoryMB)} · {formatMiB(t.diskSizeMB)}
                  </td>
                  <td className="num">{t.buildCount}</td>
                  <td className="num">{t.spawnCount}</td>
                  <td>
                    <RelativeTime iso={t.lastSpawnedAt} />
                  </td>
                  <td className="actions">
                    {t.owner === "team" && (
                      <button
                        type="button"
                        className="small danger"
                        onClick={() => {
                          remove.reset();
                          setDeleting(t);
                        }}
                        aria-label={`Delete template ${templateLabel(t)}`}
                      >
                        Delete
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ConfirmDialog
        open={deleting !== undefined}
        onClose={() => setDeleting(undefined)}
        title={`Delete template ${deleting ? templateLabel(deleting) : ""}?`}
        message="Its builds, tags and names go with it. Refused while sandboxes started from it run or are paused, or while it builds."
        confirmLabel="Delete template"
        onConfirm={() =>
          deleting && remove.mutate(deleting.templateID, { onSuccess: () => setDeleting(undefined) })
        }
        pending={remove.isPending}
        error={remove.error}
        testId="delete-template-dialog"
      />
    </div>
  );
}
