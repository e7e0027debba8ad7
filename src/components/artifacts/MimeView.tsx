import { IRenderMimeRegistry, MimeModel } from '@jupyterlab/rendermime';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import * as React from 'react';

import type { IMimeBundle } from '../../transport/api';

export interface IMimeViewProps {
  bundle: IMimeBundle;
  rendermime: IRenderMimeRegistry | null;
}

/**
 * A MIME bundle rendered by JupyterLab's rendermime, so a table or a chart looks as a
 * notebook output does. The bundle is not trusted: HTML is sanitized, as for an output of
 * an untrusted notebook, and made inert by the panel's registry (src/untrusted). Outside
 * JupyterLab (no rendermime) its text is shown.
 */
export function MimeView({ bundle, rendermime }: IMimeViewProps): JSX.Element {
  const host = React.useRef<HTMLDivElement>(null);
  const mimeType = rendermime?.preferredMimeType(
    bundle.data as IRenderMime.IMimeModel['data'],
    'ensure'
  );

  React.useEffect(() => {
    const node = host.current;
    if (!node || !rendermime || !mimeType) {
      return;
    }
    const renderer = rendermime.createRenderer(mimeType);
    const model = new MimeModel({
      data: bundle.data as IRenderMime.IMimeModel['data'],
      metadata: bundle.metadata as MimeModel.IOptions['metadata'],
      trusted: false
    });
    let disposed = false;
    void renderer.renderModel(model).then(() => {
      if (!disposed) {
        node.appendChild(renderer.node);
      }
    });
    return () => {
      disposed = true;
      renderer.node.remove();
      renderer.dispose();
    };
  }, [bundle, rendermime, mimeType]);

  if (!rendermime || !mimeType) {
    return <pre className="jp-AnalystMimeView">{String(bundle.data['text/plain'] ?? '')}</pre>;
  }
  return <div className="jp-AnalystMimeView" data-mime-type={mimeType} ref={host} />;
}
