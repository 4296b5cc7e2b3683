import { Link, useLocation } from "react-router-dom";

export function NotFoundPage() {
  const location = useLocation();
  return (
    <div className="page">
      <header className="page-header">
        <h1>Not found</h1>
      </header>
      <p>
        The console has no page at <code>{location.pathname}</code>.{" "}
        <Link to="/sandboxes">Go to sandboxes</Link>.
      </p>
    </div>
  );
}
