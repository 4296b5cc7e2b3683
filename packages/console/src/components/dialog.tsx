import { type FormEvent, type ReactNode, useEffect, useId, useRef } from "react";
import { ErrorNotice } from "./status.js";

interface DialogProps {
  open: boolean;
  onClose(): void;
  title: string;
  children: ReactNode;
  wide?: boolean;
  testId?: string;
}

/**
 * A modal on the browser's own `<dialog>`: focus moves in and stays in, Escape closes it,
 * and focus returns to what opened it.
 */
export function Dialog({ open, onClose, title, children, wide, testId }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      dialog.showModal();
      // showModal focuses the first focusable element; a field or button can ask to be first
      dialog.querySelector<HTMLElement>("[data-autofocus]")?.focus();
    }
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      className={wide ? "wide" : undefined}
      aria-labelledby={titleId}
      data-testid={testId}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
      onClose={() => open && onClose()}
    >
      {open && (
        <div className="dialog-inner">
          <h2 id={titleId}>{title}</h2>
          {children}
        </div>
      )}
    </dialog>
  );
}

interface FormDialogProps {
  open: boolean;
  onClose(): void;
  title: string;
  submitLabel: string;
  onSubmit(): void;
  pending?: boolean;
  error?: unknown;
  danger?: boolean;
  wide?: boolean;
  testId?: string;
  submitTestId?: string;
  /** Disables the submit button (a required field is empty, say). */
  invalid?: boolean;
  children?: ReactNode;
}

/** A dialog around a form: Enter submits, Escape cancels, the API's error shows inside. */
export function FormDialog(props: FormDialogProps) {
  const { open, onClose, title, submitLabel, onSubmit, pending, error, danger, children } = props;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!pending && !props.invalid) onSubmit();
  };
  return (
    <Dialog open={open} onClose={onClose} title={title} wide={props.wide} testId={props.testId}>
      <form onSubmit={submit} noValidate>
        {children}
        <ErrorNotice error={error} />
        <div className="dialog-actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button
            type="submit"
            className={danger ? "danger solid" : "primary"}
            disabled={pending || props.invalid}
            data-testid={props.submitTestId}
            data-autofocus={!children || undefined}
          >
            {pending ? `${submitLabel}…` : submitLabel}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

interface ConfirmDialogProps {
  open: boolean;
  onClose(): void;
  title: string;
  message: ReactNode;
  confirmLabel: string;
  onConfirm(): void;
  pending?: boolean;
  error?: unknown;
  danger?: boolean;
  testId?: string;
}

/** "Are you sure?" for what cannot be undone; Enter confirms, Escape cancels. */
export function ConfirmDialog(props: ConfirmDialogProps) {
  return (
    <FormDialog
      open={props.open}
      onClose={props.onClose}
      title={props.title}
      submitLabel={props.confirmLabel}
      onSubmit={props.onConfirm}
      pending={props.pending}
      error={props.error}
      danger={props.danger ?? true}
      testId={props.testId}
      submitTestId={props.testId ? `${props.testId}-confirm` : undefined}
    >
      <p style={{ margin: 0 }}>{props.message}</p>
    </FormDialog>
  );
}
