import { LabIcon } from '@jupyterlab/ui-components';

import analystSvg from '../style/icons/analyst.svg';

/** The panel's icon in the right sidebar (themed through `jp-icon3`). */
export const analystIcon = new LabIcon({
  name: 'jupyter-analyst:analyst',
  svgstr: analystSvg
});
